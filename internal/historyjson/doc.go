// Package historyjson is what `segviz history` and the visualiser's
// timeline lane say about a partition's timeline, from one definition: the
// JSON of an instant (the lines of `segviz history --json`), its one-line
// summary and the offsets it touched, and the answer to "is offset N still
// readable, and if not, which instant removed it, by which rule and config,
// and when" (`segviz history --offset N`, the page's "why is this gone"),
// with the facts that answer reads from the log. docs/history.md documents
// the JSON names; they are part of the command's interface.
//
//	insts, _ := tl.Instants(timeline.Filter{})
//	f, _ := historyjson.ReadFacts(l, n, 0)
//	a := historyjson.Lookup(n, insts, f)
//	json.NewEncoder(w).Encode(a.JSON()) // {"offset","readable","writtenBy","removedBy","rule","at"}
//	io.WriteString(w, a.Text(dir))      // the text `segviz history --offset N` prints
//
// Everything here only reads: ReadFacts reads the log through its Read
// method, the rest works on values. Nothing is safe for concurrent use
// unless it says so; the values returned share no state.
package historyjson
