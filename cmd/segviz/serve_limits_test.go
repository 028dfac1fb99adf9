package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/internal/web"
)

// hostGet GETs url with the given Host header and returns the status.
func hostGet(t *testing.T, url, host string) int {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestServeHostAllowList: on 0.0.0.0 too, a request whose Host is not a
// loopback name, the --addr host or an --allow-host name gets 421, so a
// DNS-rebinding page cannot read the files.
func TestServeHostAllowList(t *testing.T) {
	url, _, _ := startServe(t, serveOptions{addr: "0.0.0.0:0", allowHosts: []string{"kafka1.example.com"}})
	port := url[strings.LastIndex(url, ":")+1 : len(url)-1]
	for host, want := range map[string]int{
		"rebind.attacker.example:" + port: http.StatusMisdirectedRequest,
		"0.0.0.0:" + port:                 http.StatusMisdirectedRequest,
		"kafka1.example.com:" + port:      http.StatusOK,
		"KAFKA1.example.com":              http.StatusOK,
		"localhost:" + port:               http.StatusOK,
		"127.0.0.1:" + port:               http.StatusOK,
	} {
		for _, p := range []string{"", "api/partitions", "files/kafka-logs/orders-1/00000000000000000000.log"} {
			if got := hostGet(t, url+p, host); got != want {
				t.Errorf("Host %s /%s: %d, want %d", host, p, got, want)
			}
		}
	}
	// On loopback, likewise.
	url2, _, _ := startServe(t, serveOptions{addr: "127.0.0.1:0"})
	if got := hostGet(t, url2+"api/partitions", "evil.example"); got != http.StatusMisdirectedRequest {
		t.Errorf("loopback server, foreign Host: %d", got)
	}
}

// TestServeAllowHostFlag: --allow-host is repeatable and refuses an empty
// name; the help documents it and the limits.
func TestServeAllowHostFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"serve", "--allow-host", "", "--addr", "127.0.0.1:0"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("--allow-host '': exit %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	run([]string{"serve", "--help"}, &stdout, io.Discard)
	for _, want := range []string{"--allow-host", "421", "503", "Retry-After", "256 MiB", "idle"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("serve --help does not mention %q", want)
		}
	}
	var l hostList
	for _, n := range []string{"a.example", "b.example"} {
		if err := l.Set(n); err != nil {
			t.Fatal(err)
		}
	}
	if l.String() != "a.example,b.example" {
		t.Errorf("hostList %q", l.String())
	}
}

// TestServeIdleTimeout: serve's server closes idle keep-alive connections
// (web.NewServer's IdleTimeout; 60 s by default, 100 ms here), so the
// second request after a pause needs a new connection.
func TestServeIdleTimeout(t *testing.T) {
	url, _, _ := startServe(t, serveOptions{addr: "127.0.0.1:0", timeouts: web.Timeouts{Idle: 100 * time.Millisecond}})
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	reused := func() bool {
		var got bool
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { got = i.Reused }})
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"api/partitions", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return got
	}
	reused()
	if !reused() {
		t.Fatal("a request right after another did not reuse the connection: the test cannot tell")
	}
	time.Sleep(500 * time.Millisecond)
	if reused() {
		t.Error("the connection idle for 500 ms was still open (IdleTimeout 100 ms)")
	}
}
