package aggsvc

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type slotKey struct {
	step uint64
	part uint32
}

// slot accumulates one (step, partition) of one job.
type slot struct {
	key     slotKey
	dtype   DType
	op      Op
	n       int
	acc     []float32
	pushed  []bool
	waiters []*conn
	timer   *time.Timer
	created time.Time

	mu     sync.Mutex // serialises folding pushes into acc
	summed int
	dead   bool
}

// job is one registered training job: its workers' open partitions, bounded
// in memory, and its queue in the shared pool.
type job struct {
	name    string
	workers int
	weight  int
	q       *jobQueue

	mu        sync.Mutex
	slots     map[slotKey]*slot
	mem       int64 // accumulators plus queued push payloads
	gone      bool
	rankConns []int          // open connections per rank
	lost      map[int]string // ranks whose last connection closed, and why
	conns     int            // open connections of the job
	idle      *time.Timer    // unregisters the job when no worker is left
}

func (s *Server) newJob(name string, workers, weight int) *job {
	return &job{
		name: name, workers: workers, weight: weight,
		q:     s.sched.newQueue(name, weight),
		slots: map[slotKey]*slot{}, rankConns: make([]int, workers), lost: map[int]string{},
	}
}

// attach counts a worker connection of rank.
func (j *job) attach(rank uint32) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.rankConns[rank]++
	j.conns++
	delete(j.lost, int(rank))
	if j.idle != nil {
		j.idle.Stop()
		j.idle = nil
	}
}

// detach forgets a connection; the rank is lost when it was its last, and
// the job is unregistered after JobIdleTimeout without any connection.
func (s *Server) detach(j *job, rank uint32, why string) {
	j.mu.Lock()
	j.rankConns[rank]--
	j.conns--
	lost := j.rankConns[rank] == 0
	if lost {
		j.lost[int(rank)] = why
	}
	if j.conns == 0 && !j.gone {
		j.idle = time.AfterFunc(s.cfg.JobIdleTimeout, func() { s.reapIdle(j) })
	}
	j.mu.Unlock()
	if lost {
		s.workerLost(j, rank, why)
	}
}

func (s *Server) reapIdle(j *job) {
	j.mu.Lock()
	idle := j.conns == 0 && !j.gone
	j.mu.Unlock()
	s.mu.Lock()
	current := s.jobs[j.name] == j
	s.mu.Unlock()
	if idle && current {
		s.log.Info("unregistering idle job", "job", j.name, "idle", s.cfg.JobIdleTimeout)
		s.Unregister(j.name)
	}
}

// lostRank names a disconnected rank that has not pushed sl (nil: a slot
// not yet created), or returns -1.
func (j *job) lostRank(sl *slot) (int, string) {
	for r, why := range j.lost {
		if sl == nil || !sl.pushed[r] {
			return r, why
		}
	}
	return -1, ""
}

// admit records rank's push in its slot (creating the slot on first push)
// and reserves its memory; the returned slot is then folded by the pool.
func (s *Server) admit(j *job, c *conn, p pushMsg) (*slot, *errorMsg) {
	k := slotKey{p.Step, p.Partition}
	n := len(p.Data) / p.DType.Size()
	fail := func(code uint16, f string, a ...any) (*slot, *errorMsg) {
		return nil, &errorMsg{Code: code, Step: p.Step, Partition: p.Partition, Message: fmt.Sprintf(f, a...)}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.gone {
		return fail(CodeJobGone, "job %q was unregistered", j.name)
	}
	sl := j.slots[k]
	if r, why := j.lostRank(sl); r >= 0 {
		return fail(CodeWorkerLost, "job %q step %d partition %d: rank %d disconnected (%s) and has not reconnected",
			j.name, p.Step, p.Partition, r, why)
	}
	need := int64(len(p.Data))
	if sl == nil {
		need += int64(n) * 4
	}
	if j.mem+need > s.cfg.MaxJobBytes {
		return fail(CodeOverLimit, "job %q: push of step %d partition %d needs %d bytes, job holds %d of its %d-byte limit",
			j.name, p.Step, p.Partition, need, j.mem, s.cfg.MaxJobBytes)
	}
	if sl == nil {
		sl = &slot{key: k, dtype: p.DType, op: p.Op, n: n, acc: make([]float32, n),
			pushed: make([]bool, j.workers), created: time.Now()}
		sl.timer = time.AfterFunc(s.cfg.StepTimeout, func() { s.timeout(j, sl) })
		j.slots[k] = sl
	} else if sl.dtype != p.DType || sl.op != p.Op || sl.n != n {
		return fail(CodeConflict, "step %d partition %d: rank %d pushed %d %s (op %d), others pushed %d %s (op %d)",
			p.Step, p.Partition, c.rank, n, p.DType, p.Op, sl.n, sl.dtype, sl.op)
	}
	if sl.pushed[c.rank] {
		return fail(CodeConflict, "step %d partition %d: rank %d pushed twice", p.Step, p.Partition, c.rank)
	}
	sl.pushed[c.rank] = true
	sl.waiters = append(sl.waiters, c)
	j.mem += need
	return sl, nil
}

// fold runs on a pool core: copy or add one push, and finish the slot when
// it was the last.
func (s *Server) fold(j *job, sl *slot, data []byte) {
	defer func() {
		j.mu.Lock()
		j.mem -= int64(len(data))
		j.mu.Unlock()
	}()
	sl.mu.Lock()
	if sl.dead {
		sl.mu.Unlock()
		return
	}
	accumulate(sl.acc, data, sl.dtype, sl.summed == 0)
	sl.summed++
	last := sl.summed == j.workers
	if last {
		sl.dead = true
	}
	sl.mu.Unlock()
	if last {
		s.finish(j, sl)
	}
}

// finish encodes the reduced partition once and sends it to every worker.
func (s *Server) finish(j *job, sl *slot) {
	sl.timer.Stop()
	if sl.op == OpMean {
		scaleF32(sl.acc, 1/float32(j.workers))
	}
	p := pushMsg{Step: sl.key.step, Partition: sl.key.part, DType: sl.dtype, Op: sl.op}
	var out []byte
	if sl.dtype == Float32 {
		out = f32Bytes(sl.acc) // the accumulator is the result: no copy
	} else {
		out = make([]byte, sl.n*sl.dtype.Size())
		encodeResult(out, sl.acc, sl.dtype)
	}
	p.Data = out
	hdr := p.header()
	j.mu.Lock()
	waiters := sl.waiters
	if j.slots[sl.key] == sl {
		delete(j.slots, sl.key)
		j.mem -= int64(sl.n) * 4
	}
	j.mu.Unlock()
	s.m.bytes.WithLabelValues("out").Add(float64(len(out) * len(waiters)))
	s.m.steps.WithLabelValues(j.name, "ok").Inc()
	s.m.latency.Observe(time.Since(sl.created).Seconds())
	for _, c := range waiters {
		c.send(frameResult, hdr, out)
	}
}

// kill fails a slot: every worker that pushed it gets the error. Callers
// hold j.mu.
func (s *Server) killLocked(j *job, sl *slot, code uint16, result, msg string) {
	if j.slots[sl.key] != sl {
		return
	}
	delete(j.slots, sl.key)
	j.mem -= int64(sl.n) * 4
	sl.timer.Stop()
	sl.mu.Lock()
	sl.dead = true
	sl.mu.Unlock()
	s.m.steps.WithLabelValues(j.name, result).Inc()
	e := errorMsg{Code: code, Step: sl.key.step, Partition: sl.key.part, Message: msg}
	for _, c := range sl.waiters {
		c.send(frameError, e.encode())
	}
	s.log.Warn("partition failed", "job", j.name, "step", sl.key.step, "partition", sl.key.part, "error", msg)
}

func (s *Server) timeout(j *job, sl *slot) {
	j.mu.Lock()
	defer j.mu.Unlock()
	missing := missingRanks(sl)
	s.killLocked(j, sl, CodeTimeout, "timeout", fmt.Sprintf(
		"job %q step %d partition %d: timed out after %s waiting for rank(s) %v",
		j.name, sl.key.step, sl.key.part, s.cfg.StepTimeout, missing))
}

// workerLost fails every open slot the lost rank has not pushed: the others
// would otherwise wait for the timeout.
func (s *Server) workerLost(j *job, rank uint32, why string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, sl := range sortedSlots(j) {
		if !sl.pushed[rank] {
			s.killLocked(j, sl, CodeWorkerLost, "worker_lost", fmt.Sprintf(
				"job %q step %d partition %d: rank %d disconnected (%s) before pushing",
				j.name, sl.key.step, sl.key.part, rank, why))
		}
	}
}

// drop fails every open slot of an unregistered job.
func (s *Server) drop(j *job) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.gone = true
	for _, sl := range sortedSlots(j) {
		s.killLocked(j, sl, CodeJobGone, "job_gone", fmt.Sprintf("job %q was unregistered", j.name))
	}
}

func missingRanks(sl *slot) []int {
	var m []int
	for r, ok := range sl.pushed {
		if !ok {
			m = append(m, r)
		}
	}
	return m
}

func sortedSlots(j *job) []*slot {
	out := make([]*slot, 0, len(j.slots))
	for _, sl := range j.slots {
		out = append(out, sl)
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].key.step != out[b].key.step {
			return out[a].key.step < out[b].key.step
		}
		return out[a].key.part < out[b].key.part
	})
	return out
}
