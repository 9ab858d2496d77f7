package bench_test

import (
	"bytes"
	"runtime/pprof"
	"testing"
)

// The Go memory of a manager is read from the same text this process's heap profile prints.
func TestParseMemStatsReadsAHeapProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	g, err := parseMemStats(buf.String())
	if err != nil {
		t.Fatal(err)
	}
	if g.HeapAlloc <= 0 || g.NextGC <= 0 || g.held() < g.HeapAlloc {
		t.Errorf("memory statistics %+v: want a live heap, a next collection, and the runtime holding at least the heap", g)
	}
	objects, room, free, stacks, gc, other := g.heldParts()
	if sum := objects + room + free + stacks + gc + other; sum != g.held() {
		t.Errorf("the parts of what the runtime holds add up to %d, want %d (%+v)", sum, g.held(), g)
	}
	if stacks <= 0 || gc <= 0 || other <= 0 || room < 0 || free < 0 {
		t.Errorf("memory statistics %+v: want stacks, collector metadata and runtime structures mapped, and no part negative", g)
	}
	if _, err := parseMemStats("heap profile: 0: 0 [0: 0] @ heap/1048576\n"); err == nil {
		t.Error("a profile without memory statistics was read without an error")
	}
}
