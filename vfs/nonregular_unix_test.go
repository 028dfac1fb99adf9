//go:build !windows && !js && !wasip1

package vfs_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/segkit/segkit/vfs"
)

// within runs f, and fails the test if it has not returned after d: an
// open that blocks on a FIFO never returns, and must not hang the test
// binary with it.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %v", what, d)
	}
}

// mkfifo makes a FIFO at name, or skips the test.
func mkfifo(t *testing.T, name string) {
	t.Helper()
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// TestOSRefusesFIFO: every open of a FIFO by OS, FromRoot and FromIOFS
// (os.DirFS), for reading or writing, fails at once with ErrNotRegular
// naming the file, where a plain open(2) blocks until the other end opens
// it. ReadFile too.
func TestOSRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "00000000000000000000.timeindex")
	mkfifo(t, fifo)
	if err := os.Symlink("00000000000000000000.timeindex", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	rooted := vfs.FromRoot(root)
	dirFS := vfs.FromIOFS(os.DirFS(dir))
	osName := filepath.ToSlash(fifo)
	opens := []struct {
		name string
		open func() (vfs.File, error)
	}{
		{"OS.Open", func() (vfs.File, error) { return vfs.OS().Open(osName) }},
		{"OS.Open link", func() (vfs.File, error) { return vfs.OS().Open(filepath.ToSlash(filepath.Join(dir, "link"))) }},
		{"OS.OpenFile O_RDONLY", func() (vfs.File, error) { return vfs.OS().OpenFile(osName, os.O_RDONLY, 0) }},
		{"OS.OpenFile O_WRONLY", func() (vfs.File, error) { return vfs.OS().OpenFile(osName, os.O_WRONLY, 0) }},
		{"OS.OpenFile O_RDWR", func() (vfs.File, error) { return vfs.OS().OpenFile(osName, os.O_RDWR, 0) }},
		{"OS.OpenFile O_WRONLY|O_CREATE|O_TRUNC", func() (vfs.File, error) {
			return vfs.OS().OpenFile(osName, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		}},
		{"OS.Create", func() (vfs.File, error) { return vfs.OS().Create(osName) }},
		{"Sub(OS).Open", func() (vfs.File, error) { return vfs.Sub(vfs.OS(), dir).Open("00000000000000000000.timeindex") }},
		{"FromRoot.Open", func() (vfs.File, error) { return rooted.Open("00000000000000000000.timeindex") }},
		{"FromRoot.Open link", func() (vfs.File, error) { return rooted.Open("link") }},
		{"FromIOFS(DirFS).Open", func() (vfs.File, error) { return dirFS.Open("00000000000000000000.timeindex") }},
	}
	for _, o := range opens {
		var f vfs.File
		var err error
		within(t, 5*time.Second, o.name, func() { f, err = o.open() })
		if err == nil {
			f.Close()
			t.Errorf("%s: opened a FIFO", o.name)
			continue
		}
		if !errors.Is(err, vfs.ErrNotRegular) || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
			t.Errorf("%s: %v, want ErrNotRegular saying FIFO", o.name, err)
		}
		if !strings.Contains(err.Error(), "00000000000000000000.timeindex") && !strings.Contains(err.Error(), "link") {
			t.Errorf("%s: %v does not name the file", o.name, err)
		}
	}
	for _, fsys := range []vfs.FS{vfs.Sub(vfs.OS(), dir), rooted, dirFS} {
		within(t, 5*time.Second, "ReadFile "+fsys.Name(), func() { _, err = vfs.ReadFile(fsys, "00000000000000000000.timeindex") })
		if !errors.Is(err, vfs.ErrNotRegular) {
			t.Errorf("ReadFile(%s): %v, want ErrNotRegular", fsys.Name(), err)
		}
	}
}

// TestOSRefusesSocketAndDevice: a socket and a character device are
// refused as a FIFO is, each named for what it is.
func TestOSRefusesSocketAndDevice(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.log")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix socket: %v", err)
	}
	defer ln.Close()
	cases := []struct{ name, what string }{{filepath.ToSlash(sock), "socket"}}
	for _, dev := range []string{"/dev/zero", "/dev/full", "/dev/null"} {
		// Some sandboxes make /dev/null a regular file: take a real device.
		if fi, err := os.Stat(dev); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			cases = append(cases, struct{ name, what string }{dev, "character device"})
			break
		}
	}
	if len(cases) == 1 {
		t.Log("no character device to open")
	}
	for _, tc := range cases {
		for _, flag := range []int{os.O_RDONLY, os.O_WRONLY} {
			f, err := vfs.OS().OpenFile(tc.name, flag, 0)
			if err == nil {
				f.Close()
				t.Errorf("%s (flag %#x): opened", tc.name, flag)
				continue
			}
			if !errors.Is(err, vfs.ErrNotRegular) || !strings.Contains(err.Error(), "(a "+tc.what+")") || !strings.Contains(err.Error(), tc.name) {
				t.Errorf("%s (flag %#x): %v, want ErrNotRegular naming it a %s", tc.name, flag, err, tc.what)
			}
		}
	}
}

// TestOSOpenKeepsBlockingMode: the regular files and directories OS opens
// do not keep the O_NONBLOCK it opens them with, unless asked for.
func TestOSOpenKeepsBlockingMode(t *testing.T) {
	dir := t.TempDir()
	name := filepath.ToSlash(filepath.Join(dir, "f"))
	if err := os.WriteFile(name, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what     string
		open     func() (vfs.File, error)
		nonblock bool
	}{
		{"Open", func() (vfs.File, error) { return vfs.OS().Open(name) }, false},
		{"Open dir", func() (vfs.File, error) { return vfs.OS().Open(filepath.ToSlash(dir)) }, false},
		{"OpenFile O_RDWR", func() (vfs.File, error) { return vfs.OS().OpenFile(name, os.O_RDWR, 0) }, false},
		{"Create", func() (vfs.File, error) { return vfs.OS().Create(name + "2") }, false},
		{"OpenFile O_NONBLOCK", func() (vfs.File, error) { return vfs.OS().OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0) }, true},
	} {
		f, err := tc.open()
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		flags, errno := fcntlGetfl(t, f.(*os.File))
		f.Close()
		if errno != 0 {
			t.Fatalf("%s: fcntl: %v", tc.what, errno)
		}
		if got := flags&syscall.O_NONBLOCK != 0; got != tc.nonblock {
			t.Errorf("%s: O_NONBLOCK %v, want %v", tc.what, got, tc.nonblock)
		}
	}
	// Reads and writes still work.
	if err := vfs.WriteFile(vfs.OS(), name, []byte("again"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := vfs.ReadFile(vfs.OS(), name); err != nil || string(b) != "again" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
}

// fcntlGetfl returns the file status flags of f's descriptor.
func fcntlGetfl(t *testing.T, f *os.File) (int, syscall.Errno) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags uintptr
	var errno syscall.Errno
	rc.Control(func(fd uintptr) { flags, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0) })
	return int(flags), errno
}
