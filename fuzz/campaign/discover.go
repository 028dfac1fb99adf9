//go:build !js && !wasip1

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// discover lists the fuzz targets of the packages matching patterns, run
// from dir: `go list` gives each package's test files for this GOOS and
// GOARCH, and findTargets parses them.
func discover(ctx context.Context, dir string, patterns []string) ([]target, error) {
	args := append([]string{"list", "-e", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .TestGoFiles \",\"}}\t{{join .XTestGoFiles \",\"}}"}, patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, stderr.String())
	}
	var all []target
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			continue
		}
		var files []string
		for _, list := range f[2:] {
			for _, name := range strings.Split(list, ",") {
				if name != "" {
					files = append(files, filepath.Join(f[1], name))
				}
			}
		}
		ts, err := findTargets(files)
		if err != nil {
			return nil, err
		}
		for _, name := range ts {
			all = append(all, target{Name: name, ImportPath: f[0], Dir: f[1]})
		}
	}
	return all, sc.Err()
}

func numCPU() int { return runtime.NumCPU() }
