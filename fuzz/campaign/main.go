//go:build !js && !wasip1

package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

func main() {
	var (
		fuzzTime = flag.Duration("time", 10*time.Minute, "fuzzing time per target")
		targets  = flag.String("targets", "", "targets to run: a comma-separated list of names, or a regular expression (default: all)")
		packages = flag.String("packages", "./...", "package patterns to search, space-separated")
		parallel = flag.Int("parallel", 1, "fuzzing workers per target (go test -parallel)")
		jobs     = flag.Int("jobs", 1, "targets fuzzed at the same time")
		minimize = flag.Duration("minimizetime", 10*time.Second, "time to minimize each new input or crasher (go test -fuzzminimizetime)")
		list     = flag.Bool("list", false, "list the targets and exit")
		dir      = flag.String("C", ".", "run in this directory (the module root)")
		quiet    = flag.Bool("q", false, "print only the summary")
	)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./fuzz/campaign [flags]\n\nFuzzes every fuzz target of the module for -time each and reports executions per second and new corpus entries.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	all, err := discover(ctx, *dir, strings.Fields(*packages))
	if err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		os.Exit(2)
	}
	sel, err := selectTargets(all, *targets)
	if err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		os.Exit(2)
	}
	if *list {
		for _, t := range sel {
			fmt.Printf("%-28s %s\n", t.Name, t.ImportPath)
		}
		return
	}
	if len(sel) == 0 {
		fmt.Fprintln(os.Stderr, "campaign: no fuzz targets match")
		os.Exit(2)
	}
	cfg := runConfig{Dir: *dir, Time: *fuzzTime, Parallel: *parallel, Minimize: *minimize}
	fmt.Printf("campaign: %d targets, %v each, -parallel %d, %d at a time (%s/%s, %d CPUs)\n",
		len(sel), *fuzzTime, *parallel, *jobs, goEnv("GOOS"), goEnv("GOARCH"), numCPU())
	results := make([]result, len(sel))
	var mu sync.Mutex
	sem := make(chan struct{}, max(*jobs, 1))
	var wg sync.WaitGroup
	for i, t := range sel {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var out io.Writer = os.Stdout
			if *quiet {
				out = io.Discard
			}
			r := runTarget(ctx, cfg, t, &lockedWriter{w: out, mu: &mu})
			mu.Lock()
			results[i] = r
			printResult(os.Stdout, r)
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Println()
	printSummary(os.Stdout, results)
	for _, r := range results {
		if r.Err != nil {
			os.Exit(1)
		}
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type runConfig struct {
	Dir      string
	Time     time.Duration
	Parallel int
	Minimize time.Duration
}

// runTarget fuzzes one target, retrying once a failure that left no
// crasher.
func runTarget(ctx context.Context, cfg runConfig, t target, out io.Writer) result {
	var r result
	for attempt := 1; attempt <= 2; attempt++ {
		before := crashers(t)
		r = runOnce(ctx, cfg, t, out)
		r.Attempts = attempt
		if r.Err == nil || ctx.Err() != nil || len(crashers(t)) > len(before) || r.Stats.Crasher != "" {
			break
		}
		fmt.Fprintf(out, "%s: failed without a crasher (%v); retrying once (go.dev/issue/75804)\n", t.Name, r.Err)
	}
	return r
}

// crashers lists the target's testdata corpus files.
func crashers(t target) []string {
	m, _ := filepath.Glob(filepath.Join(t.Dir, "testdata", "fuzz", t.Name, "*"))
	return m
}

func runOnce(ctx context.Context, cfg runConfig, t target, out io.Writer) result {
	args := []string{"test", "-run=^$", "-fuzz=^" + regexp.QuoteMeta(t.Name) + "$",
		"-fuzztime=" + cfg.Time.String(), "-fuzzminimizetime=" + cfg.Minimize.String(),
		// go test's default -timeout of 10m would cut a long campaign
		// short: allow the fuzzing time plus room for building, the
		// baseline-coverage pass and minimising a crasher.
		"-timeout=" + (cfg.Time + cfg.Minimize + 10*time.Minute).String(),
		fmt.Sprintf("-parallel=%d", max(cfg.Parallel, 1)), t.ImportPath}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = cfg.Dir
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	r := result{Target: t, Args: args}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.Err = err
		return r
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		lastShown := time.Time{}
		for sc.Scan() {
			line := sc.Text()
			r.Stats.feed(line)
			if _, ok := parseProgress(line); ok {
				// One status line a minute is enough for a campaign log.
				if time.Since(lastShown) >= time.Minute {
					fmt.Fprintf(out, "%-24s %s\n", t.Name, strings.TrimPrefix(line, "fuzz: "))
					lastShown = time.Now()
				}
				continue
			}
			if r.Stats.failing || strings.HasPrefix(line, "FAIL") || strings.Contains(line, "panic") {
				fmt.Fprintf(out, "%-24s %s\n", t.Name, line)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	err := cmd.Wait()
	pw.Close()
	<-done
	r.Wall = time.Since(start)
	if err != nil {
		r.Err = err
	}
	return r
}

func goEnv(k string) string {
	out, err := exec.Command("go", "env", k).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
