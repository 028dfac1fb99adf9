package inspect

import "github.com/segkit/segkit/vfs"

// VerifyChunks is Verify with the chunks of entries a worker's decoders
// decode (readParallel) of chunk bytes (or one entry, if larger).
func VerifyChunks(fsys vfs.FS, dir string, opt Options, chunk int) (Report, error) {
	return verifyChunks(fsys, dir, opt, chunk)
}

// FindPartitionsWorkers is FindPartitions with the root's subdirectories
// listed by up to workers goroutines, as Verify lists them.
func FindPartitionsWorkers(fsys vfs.FS, dir string, workers int) ([]Listing, error) {
	return findPartitions(fsys, dir, workers)
}
