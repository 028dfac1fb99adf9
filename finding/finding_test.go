package finding

import (
	"encoding/json"
	"testing"
)

func TestLevel(t *testing.T) {
	for l, s := range map[Level]string{Info: "info", Warning: "warning", Error: "error", 9: "level(9)"} {
		if l.String() != s {
			t.Errorf("%d: %q", l, l.String())
		}
		if b, _ := l.MarshalText(); string(b) != s {
			t.Errorf("%d: MarshalText %q", l, b)
		}
	}
	ps := []Problem{{Level: Info}, {Level: Error}, {Level: Info}}
	if Count(ps, Info) != 2 || Count(ps, Warning) != 0 {
		t.Fatal("Count")
	}
}

func TestProblemJSON(t *testing.T) {
	p := Problem{File: "a.log", Position: 12, Kind: KindLogCRC, Level: Error, Detail: "d"}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"file":"a.log","position":12,"kind":"log-crc","level":"error","detail":"d"}`; string(b) != want {
		t.Fatalf("%s, want %s", b, want)
	}
	var q Problem
	if err := json.Unmarshal(b, &q); err != nil || q != p {
		t.Fatalf("round trip: %+v, %v", q, err)
	}
	if err := json.Unmarshal([]byte(`{"level":"bad"}`), &q); err == nil {
		t.Fatal("an unknown level was accepted")
	}
	if got := p.String(); got != "error a.log:12: log-crc: d" {
		t.Errorf("String: %q", got)
	}
}
