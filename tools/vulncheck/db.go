package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// download returns the directory of golang.org/x/vulndb@version in the
// module cache, downloading it if it is not there.
func download(version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "golang.org/x/vulndb@"+version)
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(outb, &m); jerr == nil && m.Error != "" {
		return "", fmt.Errorf("go mod download golang.org/x/vulndb@%s: %s", version, m.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download golang.org/x/vulndb@%s: %v", version, err)
	}
	if m.Dir == "" {
		return "", fmt.Errorf("go mod download golang.org/x/vulndb@%s: no directory", version)
	}
	return m.Dir, nil
}

// entry is the part of an OSV entry that the index needs.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
	Affected []struct {
		Module struct {
			Path string `json:"name"` // a module path, or "stdlib" or "toolchain"
		} `json:"package"`
		Ranges []struct {
			Type   string `json:"type"`
			Events []struct {
				Introduced string `json:"introduced,omitempty"`
				Fixed      string `json:"fixed,omitempty"`
			} `json:"events"`
		} `json:"ranges,omitempty"`
	} `json:"affected"`
}

// osvTime marshals as RFC 3339 in UTC, like vulndb's osv.Time.
type osvTime time.Time

func (t osvTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Time(t).UTC().Format(time.RFC3339))
}

type moduleVuln struct {
	ID       string  `json:"id"`
	Modified osvTime `json:"modified"`
	Fixed    string  `json:"fixed,omitempty"`
}

type modEntry struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

type vulnIndex struct {
	ID       string   `json:"id"`
	Modified osvTime  `json:"modified"`
	Aliases  []string `json:"aliases,omitempty"`
}

// build writes the database for the OSV files under osvDir to out.
// If no entry has a modification time, index/db.json gets stamp.
func build(osvDir, out string, stamp time.Time) (int, error) {
	idDir := filepath.Join(out, "ID")
	indexDir := filepath.Join(out, "index")
	for _, d := range []string{idDir, indexDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, err
		}
	}
	var (
		modified time.Time
		modules  = map[string]*modEntry{}
		vulns    []vulnIndex
		seen     = map[string]bool{}
	)
	err := filepath.WalkDir(osvDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() == "index.json" || filepath.Ext(d.Name()) != ".json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var e entry
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		if e.ID == "" || strings.ContainsAny(e.ID, `/\`) {
			return fmt.Errorf("%s: bad id %q", path, e.ID)
		}
		if seen[e.ID] {
			return fmt.Errorf("%s: id %s appears twice", path, e.ID)
		}
		seen[e.ID] = true
		if e.Modified.After(modified) {
			modified = e.Modified
		}
		vulns = append(vulns, vulnIndex{ID: e.ID, Modified: osvTime(e.Modified), Aliases: e.Aliases})
		for _, a := range e.Affected {
			m := modules[a.Module.Path]
			if m == nil {
				m = &modEntry{Path: a.Module.Path, Vulns: []moduleVuln{}}
				modules[a.Module.Path] = m
			}
			mv := moduleVuln{ID: e.ID, Modified: osvTime(e.Modified)}
			for _, r := range a.Ranges {
				if r.Type != "SEMVER" {
					continue
				}
				for _, ev := range r.Events {
					if ev.Fixed != "" && before(mv.Fixed, ev.Fixed) {
						mv.Fixed = ev.Fixed
					}
				}
				for _, ev := range r.Events {
					if i := ev.Introduced; i != "" && i != "0" && before(mv.Fixed, i) {
						mv.Fixed = ""
						break
					}
				}
			}
			m.Vulns = append(m.Vulns, mv)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		return os.WriteFile(filepath.Join(idDir, e.ID+".json"), compact.Bytes(), 0o644)
	})
	if err != nil {
		return 0, err
	}
	if len(vulns) == 0 {
		return 0, fmt.Errorf("no OSV entries under %s", osvDir)
	}

	slices.SortStableFunc(vulns, func(a, b vulnIndex) int { return strings.Compare(a.ID, b.ID) })
	mods := make([]*modEntry, 0, len(modules))
	for _, m := range modules {
		slices.SortStableFunc(m.Vulns, func(a, b moduleVuln) int { return strings.Compare(a.ID, b.ID) })
		mods = append(mods, m)
	}
	slices.SortFunc(mods, func(a, b *modEntry) int { return strings.Compare(a.Path, b.Path) })
	if err := writeJSON(filepath.Join(indexDir, "modules.json"), mods); err != nil {
		return 0, err
	}
	if err := writeJSON(filepath.Join(indexDir, "vulns.json"), vulns); err != nil {
		return 0, err
	}
	if modified.IsZero() {
		modified = stamp
	}
	db := struct {
		Modified osvTime `json:"modified"`
	}{osvTime(modified)}
	return len(vulns), writeJSON(filepath.Join(indexDir, "db.json"), db)
}

// before reports whether the unprefixed semantic version v sorts before v2
// ("" sorts before everything), as vulndb's version.Before.
func before(v, v2 string) bool {
	return semver.Compare("v"+v, "v"+v2) < 0
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return errors.Join(err, os.Remove(path))
	}
	return nil
}
