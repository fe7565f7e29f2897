package consumer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// openDisk fills a file through O_DIRECT and returns it opened with
// O_DIRECT|extra (extra = O_DSYNC: every write waits for the device, as
// paging to a real disk does).
func openDisk(b *testing.B, extra int) blockDev {
	dir := os.Getenv("MEMSHARE_BENCH_DIR") // a disk-backed folder; default the test's temp dir
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("disk-%d.bin", rand.Uint64()))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|oDirect, 0o600)
	if err != nil {
		b.Skipf("O_DIRECT file in %s: %v", dir, err)
	}
	b.Cleanup(func() { os.Remove(path) })
	fill(b, directFile{f})
	f.Close()
	if f, err = os.OpenFile(path, os.O_RDWR|oDirect|extra, 0o600); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return directFile{f}
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

// runOps times b.N operations of size n (random offsets or sequential)
// issued by depth workers at once, as a kernel or qemu drives NBD with
// many requests in flight; with depth 1, ns/op is the mean latency, with
// more it is the inverse of the throughput. Sequential runs use depth 1.
func runOps(b *testing.B, d blockDev, n int, write, random bool, depth int) {
	depth = max(depth, 1)
	if c, ok := d.(*nbd.Client); ok && depth > 1 && batchSubmit {
		runBatches(b, c, n, write, depth)
		return
	}
	var next atomic.Int64
	lats := make([][]time.Duration, depth)
	errs := make(chan error, depth)
	b.SetBytes(int64(n))
	calls0 := ioSyscalls()
	gor0 := goroutinesCreated()
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range depth {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := alignedBuf(n)
			r := rand.New(rand.NewPCG(1, uint64(w)+2))
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				off := uint64(i) * uint64(n) % benchSize
				if random {
					off = r.Uint64N(benchSize/uint64(n)) * uint64(n)
				}
				start := time.Now()
				var err error
				if write {
					err = d.WriteAt(buf, off)
				} else {
					err = d.ReadAt(buf, off)
				}
				lats[w] = append(lats[w], time.Since(start))
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if calls0 >= 0 {
		// Read and write system calls of the whole process (client,
		// endpoint and in-process donors) per operation: what batching
		// saves, free of the shared machine's timing noise.
		b.ReportMetric(float64(ioSyscalls()-calls0)/float64(b.N), "syscalls/op")
	}
	reportGoroutines(b, gor0)
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	reportLatency(b, slices.Concat(lats...))
}

// batchSubmit is set while the "-batch" ops run: NBD targets then get
// depth requests submitted at once and reaped together (fio's
// iodepth_batch_submit = iodepth, as io_uring and the kernel's plugged
// block queue submit); disk targets keep depth concurrent workers.
var batchSubmit bool

// runBatches submits depth random requests in one send, waits for all,
// and repeats.
func runBatches(b *testing.B, c *nbd.Client, n int, write bool, depth int) {
	bufs := make([][]byte, depth)
	for i := range bufs {
		bufs[i] = alignedBuf(n)
	}
	r := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 0, b.N)
	pend := make([]*nbd.Pending, depth)
	b.SetBytes(int64(n))
	calls0 := ioSyscalls()
	gor0 := goroutinesCreated()
	b.ResetTimer()
	for done := 0; done < b.N; {
		m := min(depth, b.N-done)
		start := time.Now()
		c.Cork()
		for i := range m {
			off := r.Uint64N(benchSize/uint64(n)) * uint64(n)
			if write {
				pend[i] = c.WriteAtAsync(bufs[i], off)
			} else {
				pend[i] = c.ReadAtAsync(bufs[i], off)
			}
		}
		c.Uncork()
		for i := range m {
			if err := pend[i].Wait(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		done += m
	}
	b.StopTimer()
	if calls0 >= 0 {
		b.ReportMetric(float64(ioSyscalls()-calls0)/float64(b.N), "syscalls/op")
	}
	reportGoroutines(b, gor0)
	reportLatency(b, lat)
}

// goroutinesCreated is how many goroutines the process has started.
func goroutinesCreated() uint64 {
	ms := []rtmetrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	rtmetrics.Read(ms)
	if ms[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return ms[0].Value.Uint64()
}

// reportGoroutines reports goroutines started per operation in the whole
// process (a goroutine per request would show as ≥ 1).
func reportGoroutines(b *testing.B, g0 uint64) {
	b.ReportMetric(float64(goroutinesCreated()-g0)/float64(b.N), "goroutines/op")
}

// ioSyscalls is the process's read+write system call count (-1 where
// /proc/self/io is unreadable).
func ioSyscalls() int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	var total int64
	for _, line := range strings.Split(string(data), "\n") {
		name, val, ok := strings.Cut(line, ": ")
		if ok && (name == "syscr" || name == "syscw") {
			n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if err != nil {
				return -1
			}
			total += n
		}
	}
	return total
}

func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "iops")
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

var ops = []struct {
	name          string
	size          int
	write, random bool
	depth         int
}{
	{"rand4k-read", 4096, false, true, 1},
	{"rand4k-write", 4096, true, true, 1},
	{"rand4k-read-qd16", 4096, false, true, 16},
	{"rand4k-write-qd16", 4096, true, true, 16},
	{"rand4k-read-qd16-batch", 4096, false, true, 16},
	{"rand4k-write-qd16-batch", 4096, true, true, 16},
	{"rand4k-read-qd32", 4096, false, true, 32},
	{"rand4k-write-qd32", 4096, true, true, 32},
	{"rand4k-read-qd32-batch", 4096, false, true, 32},
	{"rand4k-write-qd32-batch", 4096, true, true, 32},
	{"seq1m-read", 1 << 20, false, false, 1},
	{"seq1m-write", 1 << 20, true, false, 1},
}

// BenchmarkIO compares disk, erasure-coded remote memory (k=4, r=2 over 7
// loopback donors; split and whole layouts) and backup mode (one remote
// copy + O_DIRECT file).
func BenchmarkIO(b *testing.B) {
	targets := []string{"disk-odirect", "disk-odirect-dsync", "memshare-ec", "memshare-ec-slab64m", "memshare-ec-whole", "memshare-backup"}
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
					d = openDisk(b, 0)
				case "disk-odirect-dsync":
					d = openDisk(b, oDSync)
				case "memshare-ec":
					d, _ = openEndpoint(b, startCluster(b, 7, 64<<20), Config{Size: benchSize, RenewInterval: time.Hour})
				case "memshare-ec-slab64m":
					// The driver's default slab: this 128 MiB device is one
					// stripe, so a batch shares each donor connection.
					d, _ = openEndpoint(b, startClusterSlab(b, 7, 64<<20, DefaultSlabSize), Config{Size: benchSize, SlabSize: DefaultSlabSize, RenewInterval: time.Hour})
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
				batchSubmit = strings.HasSuffix(op.name, "-batch")
				runOps(b, d, op.size, op.write, op.random, op.depth)
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
	runOps(b, d, 4096, false, true, 1)
	for !v.healthy() {
		if time.Since(killed) > 2*time.Minute {
			b.Fatal("rebuild did not finish in 2 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.ReportMetric(time.Since(killed).Seconds(), "rebuild-s")
}
