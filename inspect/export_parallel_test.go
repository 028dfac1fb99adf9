package inspect

import "github.com/segkit/segkit/vfs"

// VerifyGroups is Verify with the groups of entries a worker's decoders
// decode (readParallel) bounded by bytes, entries and perDecoder.
func VerifyGroups(fsys vfs.FS, dir string, opt Options, bytes, entries, perDecoder int) (Report, error) {
	return verifyGroups(fsys, dir, opt, groupLimits{bytes, entries, perDecoder})
}

// FindPartitionsWorkers is FindPartitions with the root's subdirectories
// listed by up to workers goroutines, as Verify lists them.
func FindPartitionsWorkers(fsys vfs.FS, dir string, workers int) ([]Listing, error) {
	return findPartitions(fsys, dir, workers)
}
