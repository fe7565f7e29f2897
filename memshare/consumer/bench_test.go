package consumer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/caravan-dl/caravan/memshare/nbd"
)

// Benchmarks (not run by tests): I/O through the consumer endpoint over
// loopback NBD against the same I/O on a local O_DIRECT file, which is
// what swapping to disk costs.
//
//	go test -run '^$' -bench . -benchtime 2000x ./memshare/consumer/
//
// MEMSHARE_BENCH_VETH=1 (root) adds the same through a veth pair into a
// network namespace holding the donors.

const benchSize = 128 << 20

// blockDev is what a benchmark drives: an NBD client or a disk file.
type blockDev interface {
	ReadAt(p []byte, off uint64) error
	WriteAt(p []byte, off uint64) error
}

// directFile is a local file opened with O_DIRECT.
type directFile struct{ f *os.File }

func (d directFile) ReadAt(p []byte, off uint64) error {
	_, err := d.f.ReadAt(p, int64(off))
	return err
}

func (d directFile) WriteAt(p []byte, off uint64) error {
	_, err := d.f.WriteAt(p, int64(off))
	return err
}

func openDisk(b *testing.B) blockDev {
	dir := os.Getenv("MEMSHARE_BENCH_DIR") // a disk-backed folder; default the test's temp dir
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("disk-%d.bin", rand.Uint64()))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|oDirect, 0o600)
	if err != nil {
		b.Skipf("O_DIRECT file in %s: %v", dir, err)
	}
	b.Cleanup(func() { f.Close(); os.Remove(path) })
	d := directFile{f}
	fill(b, d)
	return d
}

// openEndpoint serves a volume on loopback and connects an NBD client to it.
func openEndpoint(b *testing.B, c *cluster, cfg Config) (blockDev, *Volume) {
	v := openVolume(b, c, cfg)
	ep, err := Serve(v, "", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ep.Close() })
	addr := ep.URI()[len("nbd://"):]
	host, name := addr[:indexByte(addr, '/')], addr[indexByte(addr, '/')+1:]
	cl, err := nbd.Dial(context.Background(), "tcp", host, nbd.ClientOptions{Export: name, Timeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cl.Close() })
	fill(b, cl)
	return cl, v
}

func indexByte(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// fill writes the whole device once so reads hit real data, not holes.
func fill(b *testing.B, d blockDev) {
	buf := alignedBuf(1 << 20)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	for off := uint64(0); off < benchSize; off += 1 << 20 {
		if err := d.WriteAt(buf, off); err != nil {
			b.Fatal(err)
		}
	}
}

// runOps times b.N operations of size n (random offsets or sequential).
func runOps(b *testing.B, d blockDev, n int, write, random bool) {
	buf := alignedBuf(n)
	r := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(n))
	b.ResetTimer()
	off := uint64(0)
	for range b.N {
		if random {
			off = r.Uint64N(benchSize/uint64(n)) * uint64(n)
		} else {
			off = (off + uint64(n)) % benchSize
		}
		start := time.Now()
		var err error
		if write {
			err = d.WriteAt(buf, off)
		} else {
			err = d.ReadAt(buf, off)
		}
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportLatency(b, lat)
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

var ops = []struct {
	name          string
	size          int
	write, random bool
}{
	{"rand4k-read", 4096, false, true},
	{"rand4k-write", 4096, true, true},
	{"seq1m-read", 1 << 20, false, false},
	{"seq1m-write", 1 << 20, true, false},
}

// BenchmarkIO compares disk, erasure-coded remote memory (k=4, r=2 over 7
// loopback donors; split and whole layouts) and backup mode (one remote
// copy + O_DIRECT file).
func BenchmarkIO(b *testing.B) {
	targets := []string{"disk-odirect", "memshare-ec", "memshare-ec-whole", "memshare-backup"}
	var veth *cluster
	if os.Getenv("MEMSHARE_BENCH_VETH") != "" {
		veth = vethDonors(b, 7)
		targets = append(targets, "memshare-ec-veth", "memshare-ec-whole-veth", "memshare-backup-veth")
	}
	for _, target := range targets {
		for _, op := range ops {
			b.Run(target+"/"+op.name, func(b *testing.B) {
				var d blockDev
				switch target {
				case "disk-odirect":
					d = openDisk(b)
				case "memshare-ec":
					d, _ = openEndpoint(b, startCluster(b, 7, 64<<20), Config{Size: benchSize, RenewInterval: time.Hour})
				case "memshare-ec-whole":
					d, _ = openEndpoint(b, startCluster(b, 7, 64<<20), Config{Size: benchSize, Layout: LayoutWhole, RenewInterval: time.Hour})
				case "memshare-ec-whole-veth":
					d, _ = openEndpoint(b, veth, Config{Size: benchSize, Layout: LayoutWhole, RenewInterval: time.Hour})
				case "memshare-backup":
					d, _ = openEndpoint(b, startCluster(b, 2, 256<<20), Config{Size: benchSize, Mode: ModeBackup,
						BackupPath: filepath.Join(b.TempDir(), "backup"), RenewInterval: time.Hour})
				case "memshare-ec-veth":
					d, _ = openEndpoint(b, veth, Config{Size: benchSize, RenewInterval: time.Hour})
				case "memshare-backup-veth":
					d, _ = openEndpoint(b, veth, Config{Size: benchSize, Mode: ModeBackup,
						BackupPath: filepath.Join(b.TempDir(), "backup"), RenewInterval: time.Hour})
				}
				runOps(b, d, op.size, op.write, op.random)
			})
		}
	}
}

// BenchmarkDegraded kills one donor and measures 4 KiB random reads while
// its slabs are decoded and re-homed; rebuild-s is the time until every
// slab has a live home again.
func BenchmarkDegraded(b *testing.B) {
	c := startCluster(b, 8, 64<<20)
	d, v := openEndpoint(b, c, Config{Size: benchSize, RenewInterval: time.Hour})
	killed := time.Now()
	c.donors[c.donorOn(v.nodesOf(0)[0])].Close()
	runOps(b, d, 4096, false, true)
	for !v.healthy() {
		if time.Since(killed) > 2*time.Minute {
			b.Fatal("rebuild did not finish in 2 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.ReportMetric(time.Since(killed).Seconds(), "rebuild-s")
}
