package nbd

import (
	"bytes"
	"testing"
)

// TestGroupDeliversEachResult: requests on two clients awaited as one
// group each get their own data or error.
func TestGroupDeliversEachResult(t *testing.T) {
	a, b := &memExport{buf: make([]byte, 1<<20)}, &memExport{buf: make([]byte, 1<<20)}
	_, addr := startServer(t, ServerConfig{Exports: mapExports{"a": a, "b": b}})
	ca, cb := dial(t, addr, ClientOptions{Export: "a"}), dial(t, addr, ClientOptions{Export: "b"})
	for round := range 3 { // calls are recycled between rounds
		g := NewGroup()
		wa, wb := bytes.Repeat([]byte{byte(round + 1)}, 4096), bytes.Repeat([]byte{byte(round + 9)}, 4096)
		p := []*Pending{ca.WriteAtIn(g, wa, 0), cb.WriteAtIn(g, wb, 4096), ca.WriteAtIn(g, wa, 1<<20)}
		g.Wait()
		if p[0].Wait() != nil || p[1].Wait() != nil || p[2].Wait() == nil {
			t.Fatalf("round %d: write results wrong", round)
		}
		g = NewGroup()
		ra, rb := make([]byte, 4096), make([]byte, 4096)
		p = []*Pending{ca.ReadAtIn(g, ra, 0), cb.ReadAtIn(g, rb, 4096)}
		for _, q := range p {
			if err := q.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(ra, wa) || !bytes.Equal(rb, wb) {
			t.Fatalf("round %d: read back wrong data", round)
		}
	}
	cb.Close()
	g := NewGroup()
	if err := cb.WriteAtIn(g, make([]byte, 512), 0).Wait(); err == nil {
		t.Fatal("a write on a closed client succeeded")
	}
}
