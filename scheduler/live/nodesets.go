package live

import (
	"strings"

	"github.com/hashicorp/nomad/api"
)

// Eligible node lists are memoised: computing them per job per round cost
// jobs × nodes constraint checks and sorts (3.5 s a round at 1,000 nodes ×
// 10,000 jobs), yet they depend only on the nodes and on what the job's
// constraints say, which almost every job shares. The memo lives on the
// mirror and is dropped whenever the mirror's nodes change (a node event
// or a full reconcile), so a round costs one list per distinct constraint
// set, not one per job.

// nodeSet is a sorted list of node IDs, its joined form (which orders
// classes), and id, equal for equal lists of one memo: the key of the
// class of jobs that may use exactly those nodes. The joined form of a
// thousand nodes is ~37 KB; hashing and comparing it for every job a
// round classified was most of classify at 1,000 nodes × 10,000 jobs.
type nodeSet struct {
	ids []string
	key string
	id  int
}

// nodeSets memoises node sets by what decides them, and numbers the
// distinct lists it built.
type nodeSets struct {
	m     map[string]nodeSet
	byKey map[string]int // joined list → id
}

func (c *nodeSets) get(key string, build func() []string) nodeSet {
	if c.m == nil {
		c.m, c.byKey = map[string]nodeSet{}, map[string]int{}
	}
	if s, ok := c.m[key]; ok {
		return s
	}
	ids := build()
	s := nodeSet{ids: ids, key: strings.Join(ids, ",")}
	if s.id = c.byKey[s.key]; s.id == 0 {
		s.id = len(c.byKey) + 1
		c.byKey[s.key] = s.id
	}
	c.m[key] = s
	return s
}

// eligibleSet is eligibleNodes, memoised by pool and the job's fit key.
func (w *world) eligibleSet(c *cachedJob, pool string) nodeSet {
	return w.sets.get("e\x00"+pool+"\x00"+c.fitKey(), func() []string {
		return eligibleNodes(c.job, c.gang, pool, w.nodes)
	})
}

// poolSet is poolNodes, memoised by pool.
func (w *world) poolSet(pool string) nodeSet {
	return w.sets.get("p\x00"+pool, func() []string { return poolNodes(pool, w.nodes) })
}

// fitKey is everything eligibleNodes reads of the job besides its pool:
// datacenters, and the job's, each worker group's and each worker task's
// constraints (the scheduler's own node pins and park aside, as workersFit
// skips them). Jobs with equal keys are eligible on the same nodes.
func (c *cachedJob) fitKey() string {
	if c.fit != "" {
		return c.fit
	}
	var b strings.Builder
	b.WriteString(strings.Join(c.job.Datacenters, "\x01"))
	writeConstraints(&b, c.job.Constraints)
	byGroup := map[string]*api.TaskGroup{}
	for _, tg := range c.job.TaskGroups {
		byGroup[deref(tg.Name)] = tg
	}
	for _, w := range c.gang.Workers {
		b.WriteString("\x02")
		tg := byGroup[w.source()]
		if tg == nil {
			b.WriteString("missing")
			continue
		}
		writeConstraints(&b, tg.Constraints)
		for _, t := range tg.Tasks {
			if t.Name == w.Task {
				b.WriteString("\x03")
				writeConstraints(&b, t.Constraints)
			}
		}
	}
	c.fit = "k" + b.String() // never empty
	return c.fit
}

func writeConstraints(b *strings.Builder, cs []*api.Constraint) {
	for _, c := range cs {
		if c.LTarget == nodeIDTarget && c.Operand == "=" || isParkConstraint(c) {
			continue
		}
		b.WriteString("\x04" + c.LTarget + "\x05" + c.Operand + "\x05" + c.RTarget)
	}
}
