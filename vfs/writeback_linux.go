//go:build linux && (386 || amd64 || arm64 || loong64 || riscv64 || s390x)

package vfs

import (
	"io/fs"
	"os"
	"syscall"
)

// syncFileRangeWrite is SYNC_FILE_RANGE_WRITE: start writeback of the
// range's dirty pages, do not wait.
const syncFileRangeWrite = 0x2

func startWriteback(f File) error {
	of, ok := f.(*os.File)
	if !ok {
		return nil
	}
	rc, err := of.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SyncFileRange(int(fd), 0, 0, syncFileRangeWrite) }); err != nil {
		return err
	}
	if serr != nil {
		return &fs.PathError{Op: "sync_file_range", Path: of.Name(), Err: serr}
	}
	return nil
}
