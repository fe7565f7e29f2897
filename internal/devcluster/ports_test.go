package devcluster

import (
	"net"
	"testing"
)

// fakeListener is a listener that only reports an address.
type fakeListener struct {
	net.Listener
	port int
}

func (f fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: f.port} }
func (f fakeListener) Close() error   { return nil }

// A port handed out once is never handed out again, even when the kernel
// offers it again after its listener closed (as it did to Consul's gRPC
// port and a gossip probe in one e2e binary).
func TestFreePortsNeverHandsOutAPortTwice(t *testing.T) {
	offers := []int{4001, 4002, 4001, 4002, 4003, 4001, 4004}
	p := &portSet{seen: map[int]bool{}}
	listen := func() (net.Listener, error) {
		port := offers[0]
		offers = offers[1:]
		return fakeListener{port: port}, nil
	}
	first, err := p.free(2, listen)
	if err != nil || len(first) != 2 || first[0] != 4001 || first[1] != 4002 {
		t.Fatalf("first call: %v %v", first, err)
	}
	second, err := p.free(2, listen)
	if err != nil || len(second) != 2 || second[0] != 4003 || second[1] != 4004 {
		t.Fatalf("second call: %v %v, want the ports not given before (4003, 4004)", second, err)
	}
}

// A kernel that only offers ports given before makes FreePorts fail with
// an error, not loop.
func TestFreePortsGivesUp(t *testing.T) {
	p := &portSet{seen: map[int]bool{5000: true}}
	listen := func() (net.Listener, error) { return fakeListener{port: 5000}, nil }
	if ports, err := p.free(1, listen); err == nil {
		t.Fatalf("got %v from a kernel offering only a port handed out before", ports)
	}
}

// Real ports: distinct across calls.
func TestFreePortsDistinctAcrossCalls(t *testing.T) {
	seen := map[int]bool{}
	for i := 0; i < 20; i++ {
		ports, err := FreePorts(4)
		if err != nil {
			t.Fatal(err)
		}
		for _, port := range ports {
			if seen[port] {
				t.Fatalf("port %d handed out twice", port)
			}
			seen[port] = true
		}
	}
}
