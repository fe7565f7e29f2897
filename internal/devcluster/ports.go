package devcluster

import (
	"fmt"
	"net"
	"sync"
)

// FreePorts asks the kernel for n distinct unused loopback TCP ports, none
// of which this process was given before. They are released before use,
// so a race with another process is possible but rare; within one process
// (a test binary starting Consul, Nomad agents and gossip endpoints, each
// asking separately) the kernel would hand a released port out again, and
// did: Consul's gRPC listener and a client's gossip probe both got one, and
// the client's agent failed to start.
func FreePorts(n int) ([]int, error) {
	return given.free(n, func() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") })
}

// given is every port FreePorts handed out in this process.
var given = &portSet{seen: map[int]bool{}}

// portSet hands out ports at most once.
type portSet struct {
	mu   sync.Mutex
	seen map[int]bool
}

// maxTries bounds the listeners one port may take: the kernel picks
// ephemeral ports at random from tens of thousands.
const maxTries = 64

// free takes n ports from listen that were never handed out, holding
// every listener (a port given before too, so it is not offered again)
// until all are found.
func (p *portSet) free(n int, listen func() (net.Listener, error)) ([]int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries >= maxTries*n {
			return nil, fmt.Errorf("free ports: %d listeners gave only %d ports not handed out before", tries, len(ports))
		}
		l, err := listen()
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		port := l.Addr().(*net.TCPAddr).Port
		if p.seen[port] {
			continue
		}
		p.seen[port] = true
		ports = append(ports, port)
	}
	return ports, nil
}
