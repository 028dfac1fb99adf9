package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segkit/segkit/tier/s3"
)

// The tests run against a real S3-compatible server that TestMain's
// package starts once, on free 127.0.0.1 ports with a temporary data
// directory, and kills at the end:
//
//   - versitygw, the Versity S3 Gateway with its posix backend
//     (scripts/versitygw.sh install): what CI runs, as it builds in
//     about a minute;
//   - weed, SeaweedFS's `weed mini` (scripts/seaweedfs.sh install):
//     about ten minutes to build, the other local option.
//
// SEGKIT_S3_SERVER=versitygw or weed picks one; unset, the tests use
// versitygw if it is installed, else weed if it is. Without the server
// the tests skip, and under CI=true they fail.

// The credentials of the test server's one identity.
const (
	testAccessKey = "segkit"
	testSecretKey = "segkit-secret"
)

// serverKind is one S3 server the tests can run against.
type serverKind struct {
	name    string
	binary  func() (string, error) // the installed binary, or why there is none
	install string                 // the command that installs it
	// start runs the server with its data under dir, S3 on port; the
	// returned command has not been started.
	start func(bin, dir string) (cmd *exec.Cmd, port int, err error)
}

var serverKinds = []serverKind{versitygwKind, weedKind}

// server is the one server process shared by the package's tests.
var server struct {
	once     sync.Once
	kind     string
	endpoint string
	err      error // why there is no server
	missing  bool  // err is "the server is not installed"
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has exited
	dir      string
	log      *bytes.Buffer
}

// scriptPath runs `script path` (scripts/versitygw.sh, scripts/seaweedfs.sh)
// and returns the binary it prints; env, if set, overrides it.
func scriptPath(env, script, what string) (string, error) {
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	var stderr bytes.Buffer
	cmd := exec.Command("../../scripts/"+script, "path")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %s", what, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// chooseServer returns the server the tests run against and its binary;
// missing says that err is "not installed" (a skip outside CI), not a
// bad SEGKIT_S3_SERVER.
func chooseServer() (kind serverKind, bin string, missing bool, err error) {
	if want := os.Getenv("SEGKIT_S3_SERVER"); want != "" {
		for _, k := range serverKinds {
			if k.name == want {
				bin, err := k.binary()
				if err != nil {
					return k, "", true, fmt.Errorf("SEGKIT_S3_SERVER=%s: %v", want, err)
				}
				return k, bin, false, nil
			}
		}
		return serverKind{}, "", false, fmt.Errorf("SEGKIT_S3_SERVER=%q: want versitygw or weed", want)
	}
	var why []string
	for _, k := range serverKinds {
		bin, err := k.binary()
		if err == nil {
			return k, bin, false, nil
		}
		why = append(why, err.Error())
	}
	return serverKind{}, "", true, fmt.Errorf("no S3 server for the tests (%s): install one with %s (what CI runs) or %s",
		strings.Join(why, "; "), serverKinds[0].install, serverKinds[1].install)
}

// freePorts returns n distinct free TCP ports on 127.0.0.1 whose gRPC
// twins (+10000, weed's convention) are free too.
func freePorts(n int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n && tries < 200; tries++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		if p+10000 > 65535 {
			l.Close()
			continue
		}
		g, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			l.Close()
			continue
		}
		held = append(held, l, g)
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, errors.New("no free ports")
	}
	return ports, nil
}

// startServer runs the chosen server and waits until its S3 API answers
// an authenticated request.
func startServer() {
	kind, bin, missing, err := chooseServer()
	if err != nil {
		server.err, server.missing = err, missing
		return
	}
	server.kind = kind.name
	dir, err := os.MkdirTemp("", "segkit-"+kind.name+"-")
	if err != nil {
		server.err = err
		return
	}
	server.dir = dir
	cmd, port, err := kind.start(bin, dir)
	if err != nil {
		server.err = err
		return
	}
	server.log = new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = server.log, server.log
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	start := time.Now()
	if err := cmd.Start(); err != nil {
		server.err = err
		return
	}
	server.cmd = cmd
	exited := make(chan struct{})
	server.exited = exited
	go func() { cmd.Wait(); close(exited) }()
	server.endpoint = "http://127.0.0.1:" + strconv.Itoa(port)
	b, err := s3.NewBucket(s3.Config{Endpoint: server.endpoint, Bucket: "segkit-probe", AccessKey: testAccessKey, SecretKey: testSecretKey})
	if err != nil {
		server.err = err
		return
	}
	// Ready when an authenticated request succeeds: weed's S3 port opens
	// before the filer and volume server behind it are up.
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = b.CreateBucket(ctx)
		if err == nil {
			err = b.PutBytes(ctx, "probe", []byte("ok"))
		}
		cancel()
		if err == nil {
			break
		}
		select {
		case <-exited:
			server.err = fmt.Errorf("%s exited during start-up: %v\n%s", kind.name, cmd.ProcessState, tail(server.log.String(), 40))
			return
		default:
		}
		if time.Now().After(deadline) {
			server.err = fmt.Errorf("%s's S3 API did not answer within 90s: %v\n%s", kind.name, err, tail(server.log.String(), 40))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "%s (%s) ready at %s in %v (pid %d, RSS %s)\n", kind.name, bin, server.endpoint,
		time.Since(start).Round(time.Millisecond), cmd.Process.Pid, rss(cmd.Process.Pid))
}

// rss is the process's resident set, from /proc.
func rss(pid int) string { return procStatus(pid, "VmRSS") }

// procStatus is one field of /proc/<pid>/status.
func procStatus(pid int, field string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// requireServer returns the endpoint of the shared server. Without an
// installed server the test is skipped; under CI=true that is a failure.
func requireServer(t testing.TB) string {
	t.Helper()
	server.once.Do(startServer)
	if server.err != nil {
		if server.missing && os.Getenv("CI") != "true" {
			t.Skipf("skipping: %v", server.err)
		}
		t.Fatalf("%v", server.err)
	}
	return server.endpoint
}

// newBucket returns a new bucket of its own on the shared server.
func newBucket(t testing.TB) *s3.Bucket {
	t.Helper()
	endpoint := requireServer(t)
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + "-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	b, err := s3.NewBucket(s3.Config{Endpoint: endpoint, Bucket: name, AccessKey: testAccessKey, SecretKey: testSecretKey,
		HTTPClient: &http.Client{Timeout: 2 * time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server.cmd != nil {
		fmt.Fprintf(os.Stderr, "%s peak RSS %s\n", server.kind, procStatus(server.cmd.Process.Pid, "VmHWM"))
		server.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-server.exited:
		case <-time.After(10 * time.Second):
			server.cmd.Process.Kill()
			<-server.exited
		}
	}
	if server.dir != "" {
		os.RemoveAll(server.dir)
	}
	os.Exit(code)
}
