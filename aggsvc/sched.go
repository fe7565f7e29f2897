package aggsvc

import (
	"runtime"
	"sync"
	"time"
)

// task is one unit of summation work of one job.
type task struct {
	q     *jobQueue
	run   func()
	cost  float64 // bytes to fold in
	enq   time.Time
	start float64 // virtual start tag
}

// jobQueue is one job's FIFO of tasks and its fair-share state.
type jobQueue struct {
	name       string
	weight     float64
	tasks      []task
	lastFinish float64
	closed     bool
}

// scheduler time-shares a pool of cores across jobs by start-time fair
// queuing: a task's tag is max(virtual time, its job's last finish tag), the
// finish tag adds cost/weight, and the pool always runs the smallest start
// tag. A job that bursts a thousand partitions advances only its own tags, so
// another job's next partition is served after at most one task per core.
type scheduler struct {
	mu     sync.Mutex
	cond   *sync.Cond
	queues map[*jobQueue]struct{}
	vtime  float64
	closed bool
	wg     sync.WaitGroup

	// observe reports queueing delay and CPU time per task.
	observe func(q *jobQueue, wait, cpu time.Duration)
}

func newScheduler(cores int, observe func(*jobQueue, time.Duration, time.Duration)) *scheduler {
	s := &scheduler{queues: map[*jobQueue]struct{}{}, observe: observe}
	s.cond = sync.NewCond(&s.mu)
	for range cores {
		s.wg.Add(1)
		go s.worker()
	}
	return s
}

func (s *scheduler) newQueue(name string, weight int) *jobQueue {
	if weight <= 0 {
		weight = 1
	}
	q := &jobQueue{name: name, weight: float64(weight)}
	s.mu.Lock()
	q.lastFinish = s.vtime
	s.queues[q] = struct{}{}
	s.mu.Unlock()
	return q
}

// dropQueue discards a job's queued tasks; running ones finish.
func (s *scheduler) dropQueue(q *jobQueue) {
	s.mu.Lock()
	q.tasks, q.closed = nil, true
	delete(s.queues, q)
	s.mu.Unlock()
}

// submit queues work of the given cost; false when the queue is closed.
func (s *scheduler) submit(q *jobQueue, cost float64, run func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.closed || s.closed {
		return false
	}
	start := max(s.vtime, q.lastFinish)
	q.lastFinish = start + cost/q.weight
	q.tasks = append(q.tasks, task{q: q, run: run, cost: cost, enq: time.Now(), start: start})
	s.cond.Signal()
	return true
}

// next blocks for the task with the smallest start tag; ok is false on close.
func (s *scheduler) next() (task, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed {
			return task{}, false
		}
		var best *jobQueue
		for q := range s.queues {
			if len(q.tasks) > 0 && (best == nil || q.tasks[0].start < best.tasks[0].start) {
				best = q
			}
		}
		if best != nil {
			t := best.tasks[0]
			best.tasks[0] = task{}
			best.tasks = best.tasks[1:]
			s.vtime = max(s.vtime, t.start)
			return t, true
		}
		s.cond.Wait()
	}
}

// worker runs tasks on its own OS thread so per-thread CPU time is exact.
func (s *scheduler) worker() {
	defer s.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		t, ok := s.next()
		if !ok {
			return
		}
		wait := time.Since(t.enq)
		c0 := threadCPU()
		t.run()
		if s.observe != nil {
			s.observe(t.q, wait, threadCPU()-c0)
		}
	}
}

func (s *scheduler) close() {
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	s.wg.Wait()
}

// queued is the number of tasks waiting, for the load report.
func (s *scheduler) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for q := range s.queues {
		n += len(q.tasks)
	}
	return n
}
