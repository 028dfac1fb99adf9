package checkpoint

import (
	"fmt"
	"os"
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
		c := fuzzseed.NewGrow(t, target)
		c.DefaultCap = capPerKind
		c.Caps["real"] = 60
		c.Caps["edge"] = 200
		for _, b := range real {
			c.Add("real", b)
		}
		for _, b := range real {
			for kind, m := range textMutations(b) {
				c.Add("mut-"+strings.TrimRight(kind, "0123456789"), m)
			}
		}
		for _, e := range edge {
			c.Add("edge", []byte(e))
		}
		c.Write()
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
