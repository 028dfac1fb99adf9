package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"path"
	"strconv"

	"github.com/segkit/segkit/vfs"
)

const (
	// CleanShutdownFile is the name of a log directory's clean-shutdown
	// marker (CleanShutdownFileHandler.CLEAN_SHUTDOWN_FILE_NAME).
	//
	// This constant is part of the on-disk format and should not be changed.
	CleanShutdownFile = ".kafka_cleanshutdown"

	// CleanShutdownVersion is the version written in the marker.
	CleanShutdownVersion = 0

	// UnknownBrokerEpoch is the epoch ReadCleanShutdown returns for a
	// marker that does not record one: the empty file brokers before
	// KIP-966 (Kafka 3.7) wrote, or content it cannot parse.
	UnknownBrokerEpoch = -1
)

// AppendCleanShutdown appends the marker's content as Kafka writes it
// (Json.encodeAsString of CleanShutdownFileHandler.Content):
// {"version":0,"brokerEpoch":N}, no whitespace, no final newline.
func AppendCleanShutdown(dst []byte, brokerEpoch int64) []byte {
	dst = append(dst, `{"version":`...)
	dst = strconv.AppendInt(dst, CleanShutdownVersion, 10)
	dst = append(dst, `,"brokerEpoch":`...)
	dst = strconv.AppendInt(dst, brokerEpoch, 10)
	return append(dst, '}')
}

// ParseCleanShutdown returns the broker epoch the marker's content
// records, or false when it records none: an empty file, content that is
// not a JSON object, or an object without an integer "brokerEpoch"
// (CleanShutdownFileHandler.read, which then returns an empty epoch).
// Unknown fields and the version are ignored, as Kafka ignores them.
func ParseCleanShutdown(b []byte) (int64, bool) {
	var fields map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&fields); err != nil || fields == nil {
		return UnknownBrokerEpoch, false
	}
	raw, ok := fields["brokerEpoch"]
	if !ok {
		return UnknownBrokerEpoch, false
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return UnknownBrokerEpoch, false
	}
	epoch, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return UnknownBrokerEpoch, false
	}
	return epoch, true
}

// WriteCleanShutdown writes logDir/.kafka_cleanshutdown recording
// brokerEpoch. It must be the last write of a clean shutdown, after every
// other file is synced (RELIABILITY C9).
//
// Kafka writes the marker in place and fsyncs it, without syncing the
// directory; a crash during that write can leave a torn marker that Kafka
// still takes as a clean shutdown. This writes it atomically instead
// (vfs.WriteFileAtomic: .tmp, fsync, rename, directory fsync), so the
// marker either is absent or holds the whole content.
func WriteCleanShutdown(fsys vfs.FS, logDir string, brokerEpoch int64) error {
	return vfs.WriteFileAtomic(fsys, path.Join(logDir, CleanShutdownFile), AppendCleanShutdown(nil, brokerEpoch), filePerm)
}

// ReadCleanShutdown reports whether logDir holds a clean-shutdown marker
// and the broker epoch it records (UnknownBrokerEpoch when it records
// none). As in Kafka, the marker's presence is what counts: an empty or
// unparsable marker still means a clean shutdown. A missing marker is
// (false, UnknownBrokerEpoch, nil); err is set only when the file exists
// but cannot be read.
func ReadCleanShutdown(fsys vfs.FS, logDir string) (present bool, brokerEpoch int64, err error) {
	b, err := vfs.ReadFile(fsys, path.Join(logDir, CleanShutdownFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, UnknownBrokerEpoch, nil
	}
	if err != nil {
		return false, UnknownBrokerEpoch, err
	}
	epoch, _ := ParseCleanShutdown(b)
	return true, epoch, nil
}

// RemoveCleanShutdown removes logDir's clean-shutdown marker, if any, and
// syncs the directory so that the removal is durable before the first
// write to any log (RELIABILITY C9).
func RemoveCleanShutdown(fsys vfs.FS, logDir string) error {
	if err := fsys.Remove(path.Join(logDir, CleanShutdownFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return vfs.SyncDir(fsys, logDir)
}
