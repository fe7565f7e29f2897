package live

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// A job may run only on nodes of its target pool, in its datacenters, that
// pass the constraints the scheduler can evaluate. The policy must see only
// those nodes, or it would pin the job where Nomad never places it (and
// hold that GPU in the book). Jobs with the same eligible nodes form one
// class, decided together; see round.go.

// allPool is Nomad's built-in pool that spans every node.
const allPool = "all"

// targetPool is the real pool a job is admitted into, or an error saying
// why its caravan.pool cannot be used.
func (s *Scheduler) targetPool(meta map[string]string, pools map[string]bool) (string, error) {
	pool := s.namedPool(meta)
	switch {
	case pool == s.cfg.QueuePool:
		return "", fmt.Errorf("meta %s = %q is the queue pool itself; name the pool to run in, e.g. %q", MetaPool, pool, s.cfg.Pool)
	case pools != nil && !pools[pool]:
		return "", fmt.Errorf("meta %s = %q: Nomad has no such node pool", MetaPool, pool)
	}
	return pool, nil
}

// namedPool is the pool a job's meta names, or the configured default.
func (s *Scheduler) namedPool(meta map[string]string) string {
	if pool := meta[MetaPool]; pool != "" {
		return pool
	}
	return s.cfg.Pool
}

// eligibleNodes lists (sorted) the nodes where every worker of job may run.
func eligibleNodes(job *api.Job, g gang, pool string, nodes map[string]*nodeInfo) []string {
	var out []string
	for id, n := range nodes {
		if (pool == allPool || n.Pool == pool) && inDatacenters(job.Datacenters, n.Datacenter) && workersFit(job, g, n) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// inDatacenters matches Nomad's datacenter globs ("*" matches any run of
// characters); no datacenters means all.
func inDatacenters(dcs []string, dc string) bool {
	if len(dcs) == 0 {
		return true
	}
	for _, pattern := range dcs {
		if glob(pattern, dc) {
			return true
		}
	}
	return false
}

func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// workersFit checks the job's, each worker group's and each worker task's
// constraints on n (the scheduler's own node pins and park aside).
func workersFit(job *api.Job, g gang, n *nodeInfo) bool {
	if !constraintsHold(job.Constraints, n) {
		return false
	}
	byGroup := map[string]*api.TaskGroup{}
	for _, tg := range job.TaskGroups {
		byGroup[deref(tg.Name)] = tg
	}
	for _, w := range g.Workers {
		tg := byGroup[w.source()]
		if tg == nil || !constraintsHold(tg.Constraints, n) {
			return false
		}
		for _, t := range tg.Tasks {
			if t.Name == w.Task && !constraintsHold(t.Constraints, n) {
				return false
			}
		}
	}
	return true
}

func constraintsHold(cs []*api.Constraint, n *nodeInfo) bool {
	for _, c := range cs {
		if c.LTarget == nodeIDTarget && c.Operand == "=" || isParkConstraint(c) {
			continue // the scheduler's own pin, or its park (park.go)
		}
		if !constraintHolds(c, n) {
			return false
		}
	}
	return true
}

// constraintHolds evaluates one constraint the way Nomad does for the
// operands and targets the scheduler knows; others (version, semver,
// distinct_*) hold here and are left to Nomad.
func constraintHolds(c *api.Constraint, n *nodeInfo) bool {
	l, lok := resolveTarget(c.LTarget, n)
	r, rok := resolveTarget(c.RTarget, n)
	switch c.Operand {
	case "is_set":
		return lok
	case "is_not_set":
		return !lok
	case "", "=", "==", "is":
		return lok && rok && l == r
	case "!=", "not":
		return !(lok && rok && l == r)
	case "regexp":
		re, err := regexp.Compile(r)
		return lok && err == nil && re.MatchString(l)
	case "set_contains", "set_contains_all":
		return lok && setHas(l, r, true)
	case "set_contains_any":
		return lok && setHas(l, r, false)
	case "<", "<=", ">", ">=":
		return lok && rok && compare(c.Operand, l, r)
	}
	return true
}

// resolveTarget interpolates ${node.*}, ${attr.*} and ${meta.*}; anything
// else is a literal. ok is false for an unset attribute.
func resolveTarget(t string, n *nodeInfo) (string, bool) {
	inner, ok := strings.CutPrefix(t, "${")
	if !ok || !strings.HasSuffix(inner, "}") {
		return t, true
	}
	inner = strings.TrimSuffix(inner, "}")
	switch {
	case inner == "node.unique.id":
		return n.ID, true
	case inner == "node.unique.name":
		return n.Name, true
	case inner == "node.datacenter":
		return n.Datacenter, true
	case inner == "node.class":
		return n.Class, n.Class != ""
	case inner == "node.pool":
		return n.Pool, true
	case strings.HasPrefix(inner, "attr."):
		v, ok := n.Attrs[strings.TrimPrefix(inner, "attr.")]
		return v, ok
	case strings.HasPrefix(inner, "meta."):
		v, ok := n.Meta[strings.TrimPrefix(inner, "meta.")]
		return v, ok
	}
	return "", false
}

// setHas reports whether the comma-separated set l holds all (or any) of r.
func setHas(l, r string, all bool) bool {
	have := map[string]bool{}
	for _, x := range strings.Split(l, ",") {
		have[strings.TrimSpace(x)] = true
	}
	for _, x := range strings.Split(r, ",") {
		if have[strings.TrimSpace(x)] != all {
			return !all
		}
	}
	return all
}

// compare orders numbers numerically, anything else lexically, as Nomad.
func compare(op, l, r string) bool {
	c := strings.Compare(l, r)
	if a, err1 := strconv.ParseFloat(l, 64); err1 == nil {
		if b, err2 := strconv.ParseFloat(r, 64); err2 == nil {
			c = 0
			if a < b {
				c = -1
			} else if a > b {
				c = 1
			}
		}
	}
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}
