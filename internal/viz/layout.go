package viz

import (
	"path"

	"github.com/segkit/segkit/internal/describe"
)

// LayoutJSON maps the bytes of one entry to the fields they encode: what
// links the hex view to the structure. Start and End are file positions
// (End exclusive).
type LayoutJSON struct {
	File     string      `json:"file"`
	Position int64       `json:"position"`
	Size     int         `json:"size"`
	Magic    int8        `json:"magic"`
	Fields   []FieldJSON `json:"fields"`
	// Truncated says the fields stop before the entry's end (more than
	// MaxLayoutFields, or bytes that do not parse).
	Truncated bool   `json:"truncated"`
	Error     string `json:"error,omitempty"`
}

// FieldJSON is one field of an entry (describe.Field).
type FieldJSON struct {
	Name  string `json:"name"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Value string `json:"value"`
	// Record is the index of the record the field belongs to, -1 for the
	// batch header.
	Record int `json:"record"`
	// Bad marks a field whose value is wrong (a CRC that does not match).
	Bad bool `json:"bad,omitempty"`
}

// Layout returns the fields of the entry at p["position"] of a segment
// (describe.LayoutEntry): the batch header's, and for an uncompressed v2
// batch each record's (length, attributes, deltas, key, value, headers). A
// compressed payload is one field; its records are listed by Records.
func (s *Session) Layout(q Params) (*LayoutJSON, error) {
	t, pos, err := s.entryTarget(q)
	if err != nil {
		return nil, err
	}
	raw, err := s.entryBytes(t, pos)
	if err != nil {
		return nil, err
	}
	l := describe.LayoutEntry(raw, pos, MaxLayoutFields)
	out := &LayoutJSON{File: path.Base(t.path), Position: l.Position, Size: l.Size, Magic: l.Magic,
		Fields: make([]FieldJSON, len(l.Fields)), Truncated: l.Truncated, Error: l.Error}
	for i, f := range l.Fields {
		out.Fields[i] = FieldJSON(f)
	}
	return out, nil
}
