package vfs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/segkit/segkit/vfs"
)

// A crash clone keeps what was synced and, here (the zero CrashConfig),
// nothing else.
func ExampleMem_CrashClone() {
	m := vfs.NewMem()
	f, _ := m.Create("00000000000000000000.log")
	f.Write([]byte("batch-1 "))
	f.Sync() // batch-1 is durable...
	f.Write([]byte("batch-2 "))
	f.Close()
	vfs.SyncDir(m, ".") // ...and so is the file's name.
	vfs.WriteFile(m, "cleanly-shut-down", nil, 0o644)

	c := m.CrashClone(vfs.CrashConfig{Seed: 1})
	log, _ := vfs.ReadFile(c, "00000000000000000000.log")
	fmt.Printf("%q\n", log)
	_, err := c.Stat("cleanly-shut-down")
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// "batch-1 "
	// true
}

// A FaultFS fails the operations its injector chooses, and logs them all.
func ExampleWithFaults() {
	ffs := vfs.WithFaults(vfs.NewMem(), vfs.EIO(vfs.And(vfs.KindIs(vfs.OpSync), vfs.OnIndex(0))))
	err := vfs.WriteFileAtomic(ffs, "leader-epoch-checkpoint", []byte("0\n0\n"), 0o644)
	var pe *fs.PathError
	fmt.Println(errors.As(err, &pe), pe.Op, pe.Path)
	fmt.Println(errors.Is(err, syscall.EIO), errors.Is(err, vfs.ErrInjected))
	for _, op := range ffs.Log() {
		fmt.Println(op.Kind, op.Path)
	}
	// Output:
	// true sync leader-epoch-checkpoint.tmp
	// true true
	// create leader-epoch-checkpoint.tmp
	// write leader-epoch-checkpoint.tmp
	// sync leader-epoch-checkpoint.tmp
	// close leader-epoch-checkpoint.tmp
}
