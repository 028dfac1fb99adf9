package segment

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// File name suffixes (LogFileUtils.java). A segment's files share its base
// offset, printed as 20 digits.
//
// These constants are part of the on-disk format and should not be changed.
const (
	LogSuffix       = ".log"
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
	TxnIndexSuffix  = ".txnindex"
	SnapshotSuffix  = ".snapshot"

	// Temporary suffixes, appended after the one above.
	DeletedSuffix = ".deleted"
	CleanedSuffix = ".cleaned"
	SwapSuffix    = ".swap"

	// offsetDigits is the width of a base offset in a file name.
	offsetDigits = 20
)

var kinds = []string{LogSuffix, IndexSuffix, TimeIndexSuffix, TxnIndexSuffix, SnapshotSuffix}

// FileName returns the name of a segment file: base as 20 digits (Kafka's
// NumberFormat with 20 minimum integer digits, no grouping) followed by ext,
// which is one of the suffixes above, possibly followed by a temporary
// suffix (".log.deleted").
func FileName(base int64, ext string) string {
	var b [offsetDigits + 24]byte
	n := strconv.AppendInt(b[:0], base, 10)
	out := make([]byte, 0, offsetDigits+len(ext))
	for i := len(n); i < offsetDigits; i++ {
		out = append(out, '0')
	}
	out = append(out, n...)
	return string(append(out, ext...))
}

// ParseFileName is FileName's inverse: it splits a segment file name (no
// directory) into its base offset and its extension, temporary suffix
// included. Names that are not segment files (leader-epoch-checkpoint, a
// KRaft snapshot "NNN-EEE.checkpoint", an offset with other than 20
// digits) give an error.
func ParseFileName(name string) (base int64, ext string, err error) {
	if len(name) <= offsetDigits || name[offsetDigits] != '.' {
		return 0, "", fmt.Errorf("segment: %q is not a segment file name", name)
	}
	for i := 0; i < offsetDigits; i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, "", fmt.Errorf("segment: %q is not a segment file name", name)
		}
	}
	base, err = strconv.ParseInt(name[:offsetDigits], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("segment: %q: base offset out of range", name)
	}
	ext = name[offsetDigits:]
	k := ext
	for _, t := range []string{DeletedSuffix, CleanedSuffix, SwapSuffix} {
		k = strings.TrimSuffix(k, t)
	}
	for _, known := range kinds {
		if k == known {
			return base, ext, nil
		}
	}
	return 0, "", fmt.Errorf("segment: %q has an unknown suffix %q", name, ext)
}

// Path joins dir and the file name of base with ext.
func Path(dir string, base int64, ext string) string {
	return path.Join(dir, FileName(base, ext))
}

// SplitTempSuffix splits a segment file extension (as ParseFileName
// returns it) into its kind (".log", ".index", ...) and its temporary
// suffix (DeletedSuffix, CleanedSuffix, SwapSuffix), "" when it has none.
func SplitTempSuffix(ext string) (kind, tmp string) {
	for _, t := range []string{DeletedSuffix, CleanedSuffix, SwapSuffix} {
		if k, ok := strings.CutSuffix(ext, t); ok {
			return k, t
		}
	}
	return ext, ""
}
