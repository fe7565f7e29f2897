package consumer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/memshare"
	"github.com/caravan-dl/caravan/memshare/donor"
)

// The veth benchmark runs its donors in a child process (this test binary,
// re-executed) inside a network namespace the benchmark makes, reached
// over a veth pair: real kernel networking between consumer and donors.

const childEnv = "MEMSHARE_BENCH_DONORS" // "<count> <host>" in the child

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(runChildDonors(spec))
	}
	os.Exit(m.Run())
}

// runChildDonors serves count donors on host until stdin closes, after
// printing their addresses as one JSON line.
func runChildDonors(spec string) int {
	var count int
	var host string
	if _, err := fmt.Sscan(spec, &count, &host); err != nil || count < 1 || count > 32 {
		fmt.Fprintln(os.Stderr, "bad", childEnv, spec)
		return 2
	}
	var infos []memshare.DonorInfo
	for i := range count {
		d, err := donor.New(donor.Config{Node: "veth" + strconv.Itoa(i), Key: testKey, SlabSize: testSlab, CapacityBytes: 256 << 20})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		nl, err1 := net.Listen("tcp", net.JoinHostPort(host, "0"))
		al, err2 := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err1 != nil || err2 != nil {
			fmt.Fprintln(os.Stderr, err1, err2)
			return 1
		}
		d.Start(nl, al)
		defer d.Close()
		infos = append(infos, d.Info())
	}
	_ = json.NewEncoder(os.Stdout).Encode(infos)
	_, _ = io.Copy(io.Discard, os.Stdin) // the parent holds stdin open
	return 0
}

// vethDonors makes a namespace and veth pair, starts donors inside and
// returns a cluster whose view points at them; everything is undone at
// cleanup. It skips where namespaces cannot be made.
func vethDonors(b *testing.B, count int) *cluster {
	if os.Geteuid() != 0 {
		b.Skip("veth benchmark needs root for ip netns")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		b.Skip("veth benchmark needs iproute2's ip")
	}
	id := os.Getpid() % 100000
	ns, host, peer := fmt.Sprintf("msb%d", id), fmt.Sprintf("msh%d", id), fmt.Sprintf("msn%d", id)
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %v: %v: %s", args, err, out)
		}
		return nil
	}
	b.Cleanup(func() { _ = ip("netns", "del", ns) }) // takes the veth pair with it
	steps := [][]string{
		{"netns", "add", ns},
		{"link", "add", host, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", ns},
		{"addr", "add", "10.213.7.1/24", "dev", host},
		{"link", "set", host, "up"},
		{"netns", "exec", ns, "ip", "addr", "add", "10.213.7.2/24", "dev", peer},
		{"netns", "exec", ns, "ip", "link", "set", peer, "up"},
		{"netns", "exec", ns, "ip", "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			b.Skipf("cannot build the namespace: %v", err)
		}
	}
	cmd := exec.Command("ip", "netns", "exec", ns, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d 10.213.7.2", childEnv, count))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		b.Fatalf("donor child: %v", err)
	}
	var infos []memshare.DonorInfo
	if err := json.Unmarshal(line, &infos); err != nil {
		b.Fatalf("donor child said %q: %v", line, err)
	}
	view, err := memshare.NewStaticDonors(infos)
	if err != nil {
		b.Fatal(err)
	}
	return &cluster{view: view}
}
