package main

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion checks "segviz --version" and "segviz version": one line
// with the module version ("(devel)" in a test binary) and the Go version,
// and the command in the usage text.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitOK {
			t.Fatalf("segviz %v: exit %d, stderr %q", args, code, errb.String())
		}
		got := out.String()
		if !strings.HasPrefix(got, "segviz ") || !strings.Contains(got, runtime.Version()) || strings.Count(got, "\n") != 1 {
			t.Errorf("segviz %v printed %q: want one line with the version and %s", args, got, runtime.Version())
		}
		if info, ok := debug.ReadBuildInfo(); ok && (info.Main.Version == "" || info.Main.Version == "(devel)") && !strings.Contains(got, "(devel)") {
			t.Errorf("segviz %v printed %q: want (devel) for a build from a checkout", args, got)
		}
	}
	var out bytes.Buffer
	run([]string{"help"}, &out, &out)
	if !strings.Contains(out.String(), "version ") || !strings.Contains(out.String(), "--version") {
		t.Errorf("the usage text does not mention the version command:\n%s", out.String())
	}
	if code := run([]string{"version", "extra"}, &out, &out); code != exitUsage {
		t.Errorf("segviz version extra: exit %d, want %d", code, exitUsage)
	}
}

// TestVersionString checks the formatting of the build information.
func TestVersionString(t *testing.T) {
	goVer := " (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	for _, tt := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"no_info", nil, "segviz (devel)" + goVer},
		{"release", &debug.BuildInfo{Main: debug.Module{Path: "github.com/segkit/segkit", Version: "v1.2.0"}}, "segviz v1.2.0" + goVer},
		{"checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "4f2a9c1e0b7d5a6b7c8d9e0f1a2b3c4d5e6f7a8b"},
			{Key: "vcs.time", Value: "2026-11-30T12:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		}}, "segviz (devel) revision 4f2a9c1e0b7d, 2026-11-30T12:00:00Z, modified" + goVer},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionString(tt.info, tt.info != nil); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
