package live

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caravan-dl/caravan/scheduler/policy"
	"github.com/hashicorp/nomad/api"
)

// Tasks append progress lines to $CARAVAN_PROGRESS_FILE (see
// progress_parse.go), which the driver puts in the allocation's shared dir; the scheduler
// reads new bytes through Nomad's fs API (ACL capability read-fs), so it
// needs no access to the nodes. A job's progress is its first worker's.

// progressPath is the file of task inside an allocation.
func progressPath(task string) string { return "alloc/caravan/" + task + ".progress.jsonl" }

const (
	// maxProgressRead bounds one read: a chatty task is caught up over
	// several polls rather than in one long request.
	maxProgressRead = 64 << 10
	// maxProgressLine bounds one line; longer ones are skipped as bad.
	maxProgressLine = 4 << 10
	// maxProgressPoints bounds what is kept per job: past it, every other
	// point is dropped, so a long run keeps its whole curve, thinned.
	maxProgressPoints = 512
)

// progressTarget is one running job whose progress file is to be read.
type progressTarget struct {
	job, alloc, node, task string
	workers                int
	// final is the one read of a finished job's last allocation, so the
	// queue shows where it ended, not the last poll before.
	final bool
}

// progressBook holds what was read of every job's progress. A poller
// goroutine fills it; rounds only copy from it, so a slow or unreachable
// Nomad client never delays a scheduling decision.
type progressBook struct {
	mu      sync.Mutex
	jobs    map[string]*progress
	targets []progressTarget // the latest round's running jobs
	known   map[string]bool  // the latest round's jobs; others are dropped
	// changed is the jobs whose points changed since a round last took
	// them: only those need their policy view filled again.
	changed map[string]bool
}

func newProgressBook() *progressBook { return &progressBook{jobs: map[string]*progress{}} }

// progressTargets lists the first worker of every running job, and of
// every finished job not read to its end yet, and tells the book which
// jobs still exist.
func (s *Scheduler) progressTargets(es []*entry, allocs map[string][]*api.AllocationListStub) {
	known := make(map[string]bool, len(es))
	for _, e := range es {
		known[e.stub.ID] = true
	}
	s.setProgressTargets(es, allocs, known, true)
}

// setProgressTargets hands the poller the targets among es and the jobs
// that exist (known); prune drops what was read of jobs not known (the
// incremental round drops them as they go, see know).
func (s *Scheduler) setProgressTargets(es []*entry, allocs map[string][]*api.AllocationListStub, known map[string]bool, prune bool) {
	b := s.progress
	b.mu.Lock()
	defer b.mu.Unlock()
	ts := b.targets[:0] // the poller copies what it reads under the lock (dueTargets)
	for _, e := range es {
		if e.job == nil || e.job.err != nil || e.phase != phaseRunning && e.phase != phaseDone {
			continue
		}
		w := e.job.gang.Workers[0]
		if e.phase == phaseRunning {
			if t := runningTarget(e, allocs, w); t != nil {
				ts = append(ts, *t)
			}
			continue
		}
		// a finished job's last read (looked up for finished jobs only: a
		// map lookup for each of thousands of running jobs every round)
		if p := b.jobs[e.stub.ID]; p != nil && !p.final {
			if a := allocByID(allocs[e.stub.ID], p.alloc); a != nil {
				ts = append(ts, progressTarget{job: e.stub.ID, alloc: a.ID, node: a.NodeID, task: w.Task, final: true})
			}
		}
	}
	b.targets, b.known = ts, known
	if !prune {
		return
	}
	for id := range b.jobs {
		if !known[id] {
			delete(b.jobs, id)
		}
	}
}

// runningTarget is a running job's target, kept with its entry: its
// allocations (and so the target) change only with a new entry.
func runningTarget(e *entry, allocs map[string][]*api.AllocationListStub, w worker) *progressTarget {
	k := &e.kept
	if !k.tgtOK {
		k.tgt, k.tgtOK = nil, true
		if a := runningAlloc(allocs[e.stub.ID], w.Group); a != nil {
			k.tgt = &progressTarget{job: e.stub.ID, alloc: a.ID, node: a.NodeID, task: w.Task, workers: len(e.job.gang.Workers)}
		}
	}
	return k.tgt
}

// forget drops what was read of a job (it starts a new run).
func (b *progressBook) forget(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.jobs, id)
}

// pollProgress reads the targets every ProgressInterval until ctx ends.
func (s *Scheduler) pollProgress(ctx context.Context) {
	t := time.NewTicker(s.cfg.ProgressInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.readProgress(ctx)
	}
}

// readProgress reads new progress of the due targets, a few at a time
// and at most a poll's share of ProgressReads, least recently tried
// first: the rest wait for the next poll. Failures are logged and retried
// next time: progress only informs the policy.
func (s *Scheduler) readProgress(ctx context.Context) {
	ts := s.dueTargets(unix(s.now()))
	inParallel(len(ts), progressReaders, func(i int) error {
		s.readTarget(ctx, ts[i])
		return nil
	})
}

// progressReaders bounds concurrent reads (each may wait on a client).
const progressReaders = 4

// defaultProgressReads is ProgressReads' default: a poll every 5 s reads
// up to 100 files. Below ~100 running jobs every due file is read each
// poll; at 8,000 a job's file is read every ~7 minutes instead of
// relaying 1,600 reads a second through the Nomad server.
const defaultProgressReads = 20

// dueTargets is the targets to read in this poll, least recently tried
// first (never tried: first of all), at most the poll's budget. A target
// is due when it is a final read, its allocation is new, or its back-off
// (nextAt) has passed; this is the one place that decides it.
func (s *Scheduler) dueTargets(now float64) []progressTarget {
	b := s.progress
	b.mu.Lock()
	defer b.mu.Unlock()
	type due struct {
		t       progressTarget
		triedAt float64
	}
	var ds []due
	for _, t := range b.targets {
		var tried float64
		if p := b.jobs[t.job]; p != nil {
			if !t.final && p.alloc == t.alloc && p.nextAt > now {
				continue
			}
			tried = p.triedAt
		}
		ds = append(ds, due{t, tried})
	}
	if n := s.readBudget(); len(ds) > n {
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].triedAt < ds[j].triedAt })
		ds = ds[:n]
	}
	out := make([]progressTarget, len(ds))
	for i, d := range ds {
		out[i] = d.t
	}
	return out
}

// readBudget is how many reads one poll may make.
func (s *Scheduler) readBudget() int {
	r := s.cfg.ProgressReads
	if r < 0 || math.IsInf(r, 1) {
		return math.MaxInt
	}
	return max(1, int(math.Ceil(r*s.cfg.ProgressInterval.Seconds())))
}

func (s *Scheduler) readTarget(ctx context.Context, t progressTarget) {
	b := s.progress
	b.mu.Lock()
	p := b.jobs[t.job]
	if p == nil {
		p = &progress{}
	}
	cur := p.cursor(t.alloc) // t is due: dueTargets chose it
	b.mu.Unlock()
	data, err := s.readFrom(ctx, t, cur.offset)
	now := unix(s.now())
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.known[t.job] { // forgotten meanwhile
		return
	}
	if b.jobs[t.job] == nil {
		b.jobs[t.job] = p
	}
	p = b.jobs[t.job]
	p.final = p.final || t.final // one try: the allocation may be gone
	p.triedAt = now
	s.backOff(p, cur, len(data) == 0 || err != nil, now)
	if err != nil {
		s.log.Debug("reading progress", "job", t.job, "alloc", t.alloc, "error", err)
		return
	}
	s.consume(p, t, cur, data, now)
	if b.changed == nil {
		b.changed = map[string]bool{}
	}
	b.changed[t.job] = true
}

// takeChanged returns the jobs whose progress changed since the last call.
func (b *progressBook) takeChanged() map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.changed
	b.changed = nil
	return c
}

// progressBackoff bounds how far reads of a job whose reads give nothing
// are spaced: 2, 4, 8 … up to this many progress intervals. At scale
// most polls were of files that did not exist (tasks that write no
// progress), each one a request to Nomad relayed to the client.
const progressBackoff = 12

// backOff spaces the reads of p's allocation after an empty one; a read
// that moved resets it.
func (s *Scheduler) backOff(p *progress, cur progress, empty bool, now float64) {
	if p.alloc != cur.alloc {
		return // a new allocation meanwhile: its schedule starts afresh
	}
	if !empty {
		p.idle, p.nextAt = 0, 0
		return
	}
	p.idle++
	p.nextAt = now + s.cfg.ProgressInterval.Seconds()*float64(min(1<<min(p.idle, 10), progressBackoff)) - 0.5
}

// readTimeout bounds one progress read.
const readTimeout = 5 * time.Second

// readFrom reads up to maxProgressRead bytes of t's file from offset.
// A file not written yet reads as empty.
func (s *Scheduler) readFrom(ctx context.Context, t progressTarget, offset int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	// Through the server in one request: the api package's AllocFS first
	// reads the node and tries the client's own address, three requests
	// (and a failed dial where clients are not reachable) per read.
	q := (&api.QueryOptions{Namespace: s.cfg.Namespace, Params: map[string]string{
		"path": progressPath(t.task), "offset": strconv.FormatInt(offset, 10),
		"limit": strconv.Itoa(maxProgressRead)}}).WithContext(ctx)
	r, err := s.api.Raw().Response("/v1/client/fs/readat/"+url.PathEscape(t.alloc), q)
	if err != nil {
		if strings.Contains(err.Error(), "no such file") {
			return nil, nil
		}
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxProgressRead))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return b, nil
}

// allocByID finds one allocation of a job.
func allocByID(as []*api.AllocationListStub, id string) *api.AllocationListStub {
	for _, a := range as {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// runningAlloc is the running allocation of a task group, if any.
func runningAlloc(as []*api.AllocationListStub, group string) *api.AllocationListStub {
	for _, a := range as {
		if a.TaskGroup == group && a.DesiredStatus == "run" && a.ClientStatus == "running" {
			return a
		}
	}
	return nil
}

// cursor is where reading alloc's file resumes. A new allocation (the job
// was resumed) has a new file: it is read from the start, and its points
// continue the job's curve.
func (p *progress) cursor(alloc string) progress {
	if p.alloc != alloc {
		p.alloc, p.offset, p.partial, p.skipping = alloc, 0, nil, false
		p.readAt = 0 // the step rate restarts with the new run
		p.idle, p.nextAt = 0, 0
	}
	return progress{alloc: p.alloc, offset: p.offset}
}

// consume takes b, read at cur, into p, unless p moved on meanwhile.
func (s *Scheduler) consume(p *progress, t progressTarget, cur progress, b []byte, now float64) {
	if p.alloc != cur.alloc || p.offset != cur.offset {
		return
	}
	p.offset += int64(len(b))
	if p.skipping {
		var found bool
		if b, found = skipLine(b); !found {
			return // still inside the overlong line
		}
		p.skipping = false
	}
	pts, rest, bad, skip := parseProgress(append(p.partial, b...))
	p.partial, p.skipping = append([]byte(nil), rest...), skip
	if bad > 0 {
		p.bad += bad
		s.metrics.progressBad.Add(float64(bad))
		s.log.Warn("skipped malformed progress lines", "job", t.job, "alloc", t.alloc, "task", t.task, "lines", bad)
	}
	s.metrics.progressPoints.Add(float64(len(pts)))
	p.add(pts, now, t.workers)
}

// fillProgress gives the policy's job a copy of what was read of its
// progress.
func (s *Scheduler) fillProgress(j *policy.Job) {
	s.progress.mu.Lock()
	defer s.progress.mu.Unlock()
	s.progress.jobs[j.ID].fill(j)
}

// showProgress adds each job's newest progress point to the view.
func (s *Scheduler) showProgress(v *QueueView) {
	s.progress.mu.Lock()
	defer s.progress.mu.Unlock()
	for i := range v.Jobs {
		p := s.progress.jobs[v.Jobs[i].ID]
		if p == nil || len(p.points) == 0 {
			continue
		}
		last := p.points[len(p.points)-1]
		v.Jobs[i].Step, v.Jobs[i].Loss = &last.Step, &last.Loss
	}
}
