//go:build !linux

package main

import (
	"errors"
	"io"
)

// posixLock is for Linux, where POSIX record locks and flock are apart.
func posixLock(string) (io.Closer, error) { return nil, errors.ErrUnsupported }
