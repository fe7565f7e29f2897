package live

import (
	"errors"
	"fmt"

	"github.com/caravan-dl/caravan/driver/taskspec"
	"github.com/hashicorp/nomad/api"
)

// worker is one gang member: a task group with one GPU task. A group with
// count = N is N workers: the admission splits it into groups named
// "<group>-0" … "<group>-N-1" of count 1 (From names the original).
type worker struct {
	Group string
	Task  string
	From  string
}

// source is the worker's group in the job as submitted.
func (w worker) source() string {
	if w.From != "" {
		return w.From
	}
	return w.Group
}

// maxCount bounds count = N in a worker group.
const maxCount = 256

// gang is a job's GPU demand as the policy sees it.
type gang struct {
	Workers  []worker
	Fraction float64 // per worker; 1 for a whole GPU
	MemMiB   int64   // per worker; 0 = no cap (fraction) or all (whole)
}

// parseGang reads a job's workers. Errors say what to change in the jobspec.
func parseGang(job *api.Job) (gang, error) {
	var g gang
	names := map[string]bool{}
	for _, tg := range job.TaskGroups {
		names[deref(tg.Name)] = true
	}
	for _, tg := range job.TaskGroups {
		w, frac, mem, ok, err := parseWorker(tg)
		if err != nil {
			return gang{}, err
		}
		if !ok {
			continue
		}
		if len(g.Workers) > 0 && (frac != g.Fraction || mem != g.MemMiB) {
			return gang{}, fmt.Errorf("group %q asks for a different GPU share than group %q: all workers of a gang must ask for the same", w.Group, g.Workers[0].source())
		}
		count := 1
		if tg.Count != nil {
			count = *tg.Count
		}
		ws, err := replicas(w, count, names)
		if err != nil {
			return gang{}, err
		}
		g.Workers = append(g.Workers, ws...)
		g.Fraction, g.MemMiB = frac, mem
	}
	if len(g.Workers) == 0 {
		return gang{}, errors.New("no worker: no task group has a caravan task asking for gpus = 1 or gpu_fraction")
	}
	return g, nil
}

// parseWorker returns ok=false for a group without a GPU ask.
func parseWorker(tg *api.TaskGroup) (w worker, frac float64, mem int64, ok bool, err error) {
	name := deref(tg.Name)
	for _, t := range tg.Tasks {
		f, m, asks, terr := taskAsk(t)
		if terr != nil {
			return w, 0, 0, false, fmt.Errorf("group %q task %q: %w", name, t.Name, terr)
		}
		if !asks {
			continue
		}
		if ok {
			return w, 0, 0, false, fmt.Errorf("group %q has two GPU tasks (%q, %q): put each worker in its own group", name, w.Task, t.Name)
		}
		w, frac, mem, ok = worker{Group: name, Task: t.Name}, f, m, true
	}
	return w, frac, mem, ok, nil
}

// replicas is a worker group's workers: itself for count = 1, else count
// workers in groups "<group>-<i>", whose names must be free.
func replicas(w worker, count int, names map[string]bool) ([]worker, error) {
	switch {
	case count == 1:
		return []worker{w}, nil
	case count < 1 || count > maxCount:
		return nil, fmt.Errorf("group %q has count = %d: a worker group's count must be from 1 to %d", w.Group, count, maxCount)
	}
	out := make([]worker, count)
	for i := range out {
		name := fmt.Sprintf("%s-%d", w.Group, i)
		if names[name] {
			return nil, fmt.Errorf("group %q has count = %d, and the group %q its worker %d would become already exists: rename one", w.Group, count, name, i)
		}
		out[i] = worker{Group: name, Task: w.Task, From: w.Group}
	}
	return out, nil
}

// taskAsk reads a caravan task's GPU ask with the driver's own validation
// (taskspec), so the queue holds exactly what the driver would refuse, and
// says why in the driver's words.
func taskAsk(t *api.Task) (frac float64, mem int64, asks bool, err error) {
	if t.Driver != "caravan" {
		return 0, 0, false, nil
	}
	req, err := taskRequest(t)
	switch {
	case err != nil:
		return 0, 0, false, err
	case req.None():
		return 0, 0, false, nil
	case req.Whole > 1:
		return 0, 0, false, fmt.Errorf("gpus = %d: a worker uses one GPU; split bigger asks into one group per GPU", req.Whole)
	case req.Whole == 1:
		return 1, 0, true, nil
	}
	return req.Fraction, int64(req.MemMiB), true, nil
}

// taskRequest validates a caravan task's config as the driver will.
func taskRequest(t *api.Task) (taskspec.Request, error) {
	cfg, err := taskspec.FromJob(t.Config)
	if err != nil {
		return taskspec.Request{}, err
	}
	return cfg.Parse()
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
