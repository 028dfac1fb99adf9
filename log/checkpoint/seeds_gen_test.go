package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/segkit/segkit/internal/fuzzseed"
	"github.com/segkit/segkit/internal/realdata"
)

// textMutations are the ways a crash, an operator or another tool leaves a
// real text file: cut at every line end and inside the last line, without
// its final newline, with CRLF or CR line ends, blank lines inserted, a
// line repeated or dropped, tabs and doubled spaces for separators,
// leading and trailing blanks, each number moved by one, negated, at the
// int32/int64 limits and beyond, a UTF-8 BOM, a NUL, garbage appended.
func textMutations(b []byte) map[string][]byte {
	s := string(b)
	out := map[string][]byte{}
	put := func(kind, v string) { out[kind+fmt.Sprint(len(out))] = []byte(v) }
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			put("cut-line", s[:i+1])
			put("cut-before-newline", s[:i])
		}
	}
	if len(s) > 2 {
		put("cut-mid", s[:len(s)-2])
	}
	put("no-final-newline", strings.TrimSuffix(s, "\n"))
	put("crlf", strings.ReplaceAll(s, "\n", "\r\n"))
	put("cr", strings.ReplaceAll(s, "\n", "\r"))
	put("blank-lines", strings.Replace(s, "\n", "\n\n", 2))
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 2 {
		put("line-repeated", strings.Join(append(append([]string{}, lines[:2]...), lines[1:]...), ""))
		put("line-dropped", strings.Join(append(append([]string{}, lines[:1]...), lines[2:]...), ""))
		put("lines-reversed", lines[0]+strings.Join(reverse(lines[1:]), ""))
	}
	put("tabs", strings.ReplaceAll(s, " ", "\t"))
	put("double-spaces", strings.ReplaceAll(s, " ", "  "))
	put("leading-blank", " "+strings.ReplaceAll(s, "\n", "\n "))
	put("trailing-blank", strings.ReplaceAll(s, "\n", " \n"))
	put("bom", "\ufeff"+s)
	put("nul", strings.Replace(s, "\n", "\x00\n", 1))
	put("garbage", s+"\xff\xfe garbage\n")
	num := regexp.MustCompile(`-?[0-9]+`)
	locs := num.FindAllStringIndex(s, -1)
	for k, loc := range locs {
		if k >= 6 {
			break
		}
		n := s[loc[0]:loc[1]]
		for _, r := range []string{"1" + n, "-" + n, "+" + n, "0" + n, "2147483647", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e3", "0x10", ""} {
			if (k+len(r))%3 == 0 || r == "" || r == "9223372036854775808" {
				put("number", s[:loc[0]]+r+s[loc[1]:])
			}
		}
	}
	return out
}

func reverse(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[len(ss)-1-i] = s
	}
	return out
}

// TestGenerateMoreSeeds adds grow-* seeds to the five checkpoint targets:
// every distinct real file of each kind (../shared/kafka-real and the
// 4.3.1 broker's testdata/kafka-broker) and textMutations of each, plus the
// edge cases the unit tests know. Run with -generate (after
// TestGenerateCorpus).
func TestGenerateMoreSeeds(t *testing.T) {
	if !*generate {
		t.Skip("run with -generate to rewrite testdata/fuzz from ../shared/kafka-real")
	}
	read := func(names ...string) [][]byte {
		var out [][]byte
		seen := map[string]bool{}
		for _, n := range names {
			for _, p := range realdata.Glob(t, n) {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if !seen[string(b)] {
					seen[string(b)] = true
					out = append(out, b)
				}
			}
		}
		return out
	}
	grow := func(target string, capPerKind int, real [][]byte, edge []string) {
		c := newGrowCorpus(t, target)
		c.defCap = capPerKind
		c.caps["real"] = 60
		c.caps["edge"] = 200
		for _, b := range real {
			c.add("real", b)
		}
		for _, b := range real {
			for kind, m := range textMutations(b) {
				c.add("mut-"+strings.TrimRight(kind, "0123456789"), m)
			}
		}
		for _, e := range edge {
			c.add("edge", []byte(e))
		}
		c.write()
	}
	grow("FuzzReadOffsetCheckpoint", 8, read(RecoveryPointFile, LogStartOffsetFile, ReplicationOffsetFile, CleanerOffsetFile), []string{
		"0\n0\n", "0\n1\n__consumer_offsets 49 0\n", "0\n1\ntopic-with.dots_and-dashes 2147483647 9223372036854775807\n",
		"0\n1\nt -1 0\n", "0\n1\nt 0 -1\n", "0\n1\nt 2147483648 0\n", "0\n1\n t 0 1\n", "0\n1\nt  0 1\n", "0\n1\nt 0 1 \n",
		"0\n2\nt 0 1\n", "0\n1\nt 0 1\nt 1 2\n", "0\n1\nt 0 1\n\n", "-1\n0\n", "00\n0\n", "+0\n0\n", "0\n+1\nt 0 1\n", "0\n01\nt 0 1\n",
		"0 \n0\n", "0\n0\nextra\n", "\n0\n0\n", "0\n1\nt\x000 1\n", "0\n1\nt 0 1", "0\n1\nt 0", "0\n1\nt", "0\n1\n", "0\n3\na 0 1\nb 0 2\nc 0 3\n",
	})
	grow("FuzzReadLeaderEpochCheckpoint", 8, read(LeaderEpochFile), []string{
		"0\n1\n0 0\n", "0\n1\n-1 0\n", "0\n1\n2147483648 0\n", "0\n1\n0 9223372036854775808\n", "0\n2\n0 0\n0 5\n", "0\n2\n0 5\n1 5\n",
		"0\n2\n1 10\n0 20\n", "0\n3\n0 0\n5 100\n3 200\n", "0\n2\n0 0\n1 10\n", "0\n2\n0 0\n1 10", "0\n2\n0 0\n1 1", "0\n2\n0 0\n1 ", "0\n1\n 0 0\n",
		"0\n1\n0  0\n", "0\n1\n0\t0\n", "0\n1\n0 0 \n", "0\n-1\n", "0\n2147483647\n", "0\n1\n0 0\n0 0\n", "0\n0\n0 0\n", "1\n0\n", "2\n1\n0 0\n",
		"0\r\n1\r\n0 0\r\n", "0\n1\n0 0\r\n", "0\n1\n+1 +5\n", "0\n1\n01 05\n",
	})
	grow("FuzzReadPartitionMetadata", 6, read(PartitionMetadataFile), []string{
		"version: 0\ntopic_id: 00000000000000000000000\n", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n", "version: 0\ntopic_id: ////////////////////w\n",
		"version: 0\ntopic_id: ______________________\n", "version: 0\ntopic_id: --------------------__\n", "version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwl=\n",
		"version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\n", "version: 1\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\n", "version: 2147483648\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\n",
		"version: 0\r\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\r\n", "topic_id: Rkh9AX0GSAe8U38BBNFwlg\nversion: 0\n", "version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\n",
		"version:  0\ntopic_id:  Rkh9AX0GSAe8U38BBNFwlg\n", "version 0\ntopic_id Rkh9AX0GSAe8U38BBNFwlg\n", "version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\n\n",
		"version: 0\ntopic_id: \n", "version: 0\ntopic_id:Rkh9AX0GSAe8U38BBNFwlg", "version: 0\ntopicid: Rkh9AX0GSAe8U38BBNFwlg\n", "Version: 0\nTopic_Id: Rkh9AX0GSAe8U38BBNFwlg\n",
		"version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\x00", "version: +0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\n", "version: 00\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\n",
	})
	var shutdown []string
	for _, v := range []string{"0", "-1", "1", "6439", "53326", "2147483647", "2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "1.0", "1e3", "-0", "00", "0x10", `"5"`, "null", "true", "[]", "{}", "1.5e300"} {
		shutdown = append(shutdown, `{"version":0,"brokerEpoch":`+v+`}`, `{"brokerEpoch":`+v+`,"version":0}`)
	}
	shutdown = append(shutdown, `{}`, `{"version":1,"brokerEpoch":5}`, `{"version":"0","brokerEpoch":5}`, `{"version":0,"brokerEpoch":5,"extra":[1,{"a":null}]}`,
		`{"version":0,"brokerEpoch":5,"brokerEpoch":7}`, ` { "version" : 0 , "brokerEpoch" : 5 } `, "{\n  \"version\": 0,\n  \"brokerEpoch\": 5\n}\n",
		`{"version":0,"brokerepoch":5}`, `{"version":0,"broker\u0045poch":5}`, `{"version":0,"brokerEpoch":5`, `{"version":0,"brokerEpoch":5}}`, `{"version":0,"brokerEpoch":5}garbage`,
		`{"version":0,"brokerEpoch":5,}`, `{'version':0,'brokerEpoch':5}`, "\ufeff{\"version\":0,\"brokerEpoch\":5}", `"brokerEpoch"`, `null`, `5`, "\x00", "{\"version\":0,\"brokerEpoch\":5}\n")
	for i := 1; i < len(`{"version":0,"brokerEpoch":6439}`); i += 3 {
		shutdown = append(shutdown, `{"version":0,"brokerEpoch":6439}`[:i])
	}
	grow("FuzzParseCleanShutdown", 4, read(CleanShutdownFile), shutdown)
	meta := []string{
		"version=0\nbroker.id=0\n", "version=1\nnode.id=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n", "version=1\nnode.id=1\ncluster.id=x\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\n",
		"version=1\nnode.id=1\n", "version=1\ncluster.id=x\n", "version=0\n", "broker.id=1\n", "version=0\nbroker.id=-1\n", "version=0\nbroker.id=2147483648\n", "version=0\nbroker.id=abc\n",
		"version=-1\nbroker.id=1\n", "version=01\nnode.id=1\ncluster.id=x\n", "version = 1\nnode.id = 1\ncluster.id = x\n", "version:1\nnode.id:1\ncluster.id:x\n", "version 1\nnode.id 1\ncluster.id x\n",
		"version\t1\nnode.id\t1\ncluster.id\tx\n", "! comment\nversion=0\nbroker.id=3\n", "   # indented comment\nversion=0\nbroker.id=3\n", "version=0\\\n\nbroker.id=3\n",
		"version=\\\n  1\nnode.id=1\ncluster.id=x\n", "ver\\\nsion=1\nnode.id=1\ncluster.id=x\n", "version=0\nbroker.id=3\\", "version=0\nbroker.id=3\\\\\n", "version=0\nbroker\\.id=3\n",
		"version=0\nbroker\\=id=3\n", "version=0\nbroker\\ id=3\n", "version=0\nbroker.id=\\u0033\n", "version=0\nbroker.id=\\u003\n", "version=0\nbroker.id=\\uzzzz\n", "version=0\nbroker.id=\\t3\n",
		"version=0\r\nbroker.id=3\r\n", "version=0\rbroker.id=3\r", "version=0\nbroker.id=3\nbroker.id=4\n", "version=0\nbroker.id=3\nversion=1\n", "version=0\nbroker.id=3\n\xe9=\xff\n",
		"\ufeffversion=0\nbroker.id=3\n", "=\n", "==\n", ":\n", "\\\n", "#\n!\n\n", "version=0\nbroker.id=3\nnode.id=4\n", "version=1\nnode.id=1\ncluster.id=\n", "version=1\nnode.id=1\ncluster.id\n",
		"version=2\nnode.id=1\ncluster.id=x\n", "version=1\nnode.id=1\ncluster.id=x\nbroker.id=2\n", "version=0\nbroker.id=3\n\x00\n",
	}
	grow("FuzzParseMetaProperties", 6, read(MetaPropertiesFile), meta)
}

// growMaxSeed is the repository's bound on a committed seed file.
const growMaxSeed = 10 << 10

// growCorpus collects the seeds of one target and writes them as grow-*
// files: named by a hash of their content, never a duplicate of a file
// already in the directory, each under growMaxSeed, at most caps[kind]
// (defCap otherwise) of each kind.
type growCorpus struct {
	t      testing.TB
	dir    string
	target string
	seen   map[string]bool
	files  map[string]string
	kinds  map[string]int
	caps   map[string]int
	defCap int
}

func newGrowCorpus(t testing.TB, target string) *growCorpus {
	c := &growCorpus{t: t, target: target, dir: filepath.Join("testdata", "fuzz", target), seen: map[string]bool{}, files: map[string]string{}, kinds: map[string]int{}, caps: map[string]int{}, defCap: 1000}
	ents, _ := os.ReadDir(c.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "grow-") {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(c.dir, e.Name())); err == nil {
			c.seen[string(b)] = true
		}
	}
	return c
}

// add adds one seed (the fuzz function's arguments, in order); it reports
// whether the seed was new, small enough and within its kind's cap.
func (c *growCorpus) add(kind string, values ...any) bool {
	text := fuzzseed.Encode(values...)
	limit, ok := c.caps[kind]
	if !ok {
		limit = c.defCap
	}
	if len(text) >= growMaxSeed || c.seen[text] || c.kinds[kind] >= limit {
		return false
	}
	c.seen[text] = true
	sum := sha256.Sum256([]byte(text))
	c.files["grow-"+kind+"-"+hex.EncodeToString(sum[:6])] = text
	c.kinds[kind]++
	return true
}

// write replaces the directory's grow-* files with the collected ones.
func (c *growCorpus) write() {
	c.t.Helper()
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	ents, _ := os.ReadDir(c.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "grow-") {
			if err := os.Remove(filepath.Join(c.dir, e.Name())); err != nil {
				c.t.Fatal(err)
			}
		}
	}
	for name, text := range c.files {
		if err := os.WriteFile(filepath.Join(c.dir, name), []byte(text), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.t.Logf("%s: %d grow seeds %v", c.target, len(c.files), c.kinds)
}
