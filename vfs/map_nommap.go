//go:build js || wasip1

package vfs

import "io"

// The WASM ports have no mmap: Map reads files into memory.
const haveMmap = false

type platformMap struct{}

func mmapOpen(string) (*platformMap, error) { panic("unreachable") }

func (*platformMap) Len() int                          { return 0 }
func (*platformMap) At(int) byte                       { panic("unreachable") }
func (*platformMap) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (*platformMap) Close() error                      { return nil }
