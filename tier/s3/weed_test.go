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
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segkit/segkit/tier/s3"
)

// The credentials of the test server's one identity.
const (
	testAccessKey = "segkit"
	testSecretKey = "segkit-secret"
)

// server is one weed process shared by the package's tests.
var server struct {
	once     sync.Once
	endpoint string
	err      error // why there is no server
	missing  bool  // err is "weed is not installed"
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has exited
	dir      string
	log      *bytes.Buffer
}

// weedBinary is $SEGKIT_WEED, or what scripts/seaweedfs.sh installed.
func weedBinary() (string, error) {
	if p := os.Getenv("SEGKIT_WEED"); p != "" {
		return p, nil
	}
	var stderr bytes.Buffer
	cmd := exec.Command("../../scripts/seaweedfs.sh", "path")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("SeaweedFS: %s", strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
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

// startServer runs `weed mini` (master, volume, filer and S3 in one
// process) on free ports with one identity, and waits until S3 answers.
func startServer() {
	bin, err := weedBinary()
	if err != nil {
		server.err, server.missing = err, true
		return
	}
	dir, err := os.MkdirTemp("", "segkit-weed-")
	if err != nil {
		server.err = err
		return
	}
	server.dir = dir
	cfg := filepath.Join(dir, "s3.json")
	ident := fmt.Sprintf(`{"identities":[{"name":"segkit","credentials":[{"accessKey":%q,"secretKey":%q}],"actions":["Admin","Read","Write","List","Tagging"]}]}`, testAccessKey, testSecretKey)
	if err := os.WriteFile(cfg, []byte(ident), 0o600); err != nil {
		server.err = err
		return
	}
	ports, err := freePorts(5)
	if err != nil {
		server.err = err
		return
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		server.err = err
		return
	}
	args := weedArgs(data, cfg, ports)
	server.log = new(bytes.Buffer)
	cmd := exec.Command(bin, args...)
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
	server.endpoint = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	b, err := s3.NewBucket(s3.Config{Endpoint: server.endpoint, Bucket: "segkit-probe", AccessKey: testAccessKey, SecretKey: testSecretKey})
	if err != nil {
		server.err = err
		return
	}
	// Ready when an authenticated request succeeds: the S3 port opens
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
			server.err = fmt.Errorf("weed exited during start-up: %v\n%s", cmd.ProcessState, tail(server.log.String(), 40))
			return
		default:
		}
		if time.Now().After(deadline) {
			server.err = fmt.Errorf("weed's S3 API did not answer within 90s: %v\n%s", err, tail(server.log.String(), 40))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "weed %s ready at %s in %v (pid %d, RSS %s)\n", args[0], server.endpoint, time.Since(start).Round(time.Millisecond), cmd.Process.Pid, rss(cmd.Process.Pid))
}

// weedArgs are the arguments of the test server: `weed mini`, the
// all-in-one mode, with its extras (WebDAV, admin UI, Iceberg and Lance
// catalogs, telemetry) off and every port chosen here.
//
// SEGKIT_WEED_MODE=server runs `weed server -s3` instead (a master, a
// volume server, a filer and S3 in one process, without mini's defaults),
// to compare the two.
func weedArgs(data, cfg string, p []int) []string {
	if os.Getenv("SEGKIT_WEED_MODE") == "server" {
		return []string{"server", "-s3",
			"-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
			"-s3.config=" + cfg, "-s3.port=" + strconv.Itoa(p[0]),
			"-master.port=" + strconv.Itoa(p[1]), "-filer.port=" + strconv.Itoa(p[2]), "-volume.port=" + strconv.Itoa(p[3]),
			"-master.volumeSizeLimitMB=64", "-volume.max=0",
		}
	}
	return []string{"mini",
		"-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-s3.config=" + cfg, "-s3.port=" + strconv.Itoa(p[0]),
		"-master.port=" + strconv.Itoa(p[1]), "-filer.port=" + strconv.Itoa(p[2]), "-volume.port=" + strconv.Itoa(p[3]),
		"-admin.port=" + strconv.Itoa(p[4]), "-admin.port.legacy=0", "-admin.ui=false",
		"-webdav=false", "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false",
		"-master.volumeSizeLimitMB=64",
	}
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

// requireServer returns the endpoint of the shared weed server. Without
// the weed binary the test is skipped; under CI=true that is a failure.
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
		fmt.Fprintf(os.Stderr, "weed peak RSS %s\n", procStatus(server.cmd.Process.Pid, "VmHWM"))
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
