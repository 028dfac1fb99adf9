package producer

import (
	"errors"
	"io/fs"
	"testing"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
