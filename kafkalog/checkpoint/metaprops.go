package checkpoint

import (
	"path"
	"strconv"
	"strings"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

// MetaPropertiesFile is the name of a log directory's identity file.
//
// This constant is part of the on-disk format and should not be changed.
const MetaPropertiesFile = "meta.properties"

// MetaProperties is the content of meta.properties
// (org.apache.kafka.metadata.properties.MetaProperties).
type MetaProperties struct {
	// Version is 0 (ZooKeeper-era, broker.id) or 1 (KRaft, node.id).
	Version int32
	// ClusterID is cluster.id, "" when absent (allowed in version 0). It
	// is any string: old clusters used non-base64 ids.
	ClusterID string
	// NodeID is broker.id (version 0) or node.id (version 1); HasNodeID
	// is false when a version 0 file has no broker.id.
	NodeID    int32
	HasNodeID bool
	// DirectoryID is directory.id (KIP-858), the zero UUID when absent.
	DirectoryID UUID
	// Props holds every property of the file, including unknown ones.
	Props map[string]string
}

// ParseMetaProperties decodes meta.properties: a java.util.Properties file
// (ISO-8859-1; '#' and '!' comments; key=value, key:value or key value;
// backslash escapes and line continuations), interpreted as
// MetaProperties.Builder(Properties) does. A missing version means 0;
// version 1 requires node.id and cluster.id. Errors are
// *format.CorruptionError wrapping format.ErrInvalid, at the offset of the
// property at fault (0 for a missing one).
func ParseMetaProperties(b []byte) (MetaProperties, error) {
	props, at := parseProperties(b)
	m := MetaProperties{Props: props}
	bad := func(key, msg string, args ...any) (MetaProperties, error) {
		return MetaProperties{}, format.Corruptf("", at[key], format.ErrInvalid, msg, args...)
	}
	switch v := strings.TrimSpace(props["version"]); v {
	case "", "0":
	case "1":
		m.Version = 1
	default:
		return bad("version", "Unknown meta.properties version %q", v)
	}
	idKey := "broker.id"
	if m.Version == 1 {
		idKey = "node.id"
	}
	if s, ok := props[idKey]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return bad(idKey, "Failed to parse %s property as an int: %q", idKey, s)
		}
		m.NodeID, m.HasNodeID = int32(n), true
	} else if m.Version == 1 {
		return bad(idKey, "node.id was not found.")
	}
	m.ClusterID = props["cluster.id"]
	if _, ok := props["cluster.id"]; !ok && m.Version == 1 {
		return bad("cluster.id", "cluster.id was not found.")
	}
	if s, ok := props["directory.id"]; ok {
		u, err := ParseUUID(s)
		if err != nil {
			return bad("directory.id", "Unable to read directory.id as a Uuid: %v", err)
		}
		m.DirectoryID = u
	}
	return m, nil
}

// ReadMetaProperties reads logDir/meta.properties. A missing file gives an
// error matching fs.ErrNotExist.
func ReadMetaProperties(fsys vfs.FS, logDir string) (MetaProperties, error) {
	p := path.Join(logDir, MetaPropertiesFile)
	b, err := vfs.ReadFile(fsys, p)
	if err != nil {
		return MetaProperties{}, err
	}
	m, err := ParseMetaProperties(b)
	return m, format.WithPath(err, p, 0)
}

// parseProperties reads a java.util.Properties text (Properties.load of an
// ISO-8859-1 stream) into a map, and each key's line offset. A later
// duplicate key wins.
func parseProperties(b []byte) (map[string]string, map[string]int64) {
	props := map[string]string{}
	at := map[string]int64{}
	r := lineReader{b: b}
	for {
		line, off, ok := r.next()
		if !ok {
			return props, at
		}
		line = strings.TrimLeft(line, " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// A line ending in an odd number of backslashes continues on the
		// next one, whose leading whitespace is skipped.
		for trailingBackslashes(line)%2 == 1 {
			next, _, ok := r.next()
			line = line[:len(line)-1]
			if !ok {
				break
			}
			line += strings.TrimLeft(next, " \t\f")
		}
		key, value := splitProperty(line)
		k := unescapeProperty(key)
		props[k] = unescapeProperty(value)
		at[k] = off
	}
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

// splitProperty splits a logical line at the first unescaped '=', ':' or
// whitespace; whitespace and one '=' or ':' after the key are skipped.
func splitProperty(line string) (key, value string) {
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	i = min(i, len(line))
	key = line[:i]
	rest := strings.TrimLeft(line[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

// unescapeProperty decodes Properties escapes (\t \n \r \f \uXXXX, and a
// backslash before any other character stands for that character) and
// maps ISO-8859-1 bytes to runes.
func unescapeProperty(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			if c != '\\' {
				b.WriteRune(rune(c))
			}
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if n, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
					b.WriteRune(rune(n))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteRune(rune(s[i]))
		}
	}
	return b.String()
}
