package live

import (
	"hash/fnv"
	"strconv"

	"github.com/hashicorp/nomad/api"
)

// rendezvous is where a gang's workers meet: rank 0's node and a port, as
// torchrun's MASTER_ADDR and MASTER_PORT.
type rendezvous struct {
	Addr string
	Port int
}

// Rendezvous ports are picked from this range, by job and admission, so
// two gangs on one node rarely pick the same one and a resumed gang does
// not meet a lingering socket of its previous run.
const (
	rendezvousBase  = 29500
	rendezvousRange = 500
)

// rendezvousFor is the rendezvous of job's admission number n at ts; addr
// (Config.RendezvousAddr) is resolved on rank 0's node.
func rendezvousFor(job string, n int, ts []target, nodes map[string]*nodeInfo, addr string) rendezvous {
	h := fnv.New32a()
	h.Write([]byte(job + "#" + strconv.Itoa(n)))
	rv := rendezvous{Port: rendezvousBase + int(h.Sum32()%rendezvousRange)}
	if len(ts) > 0 {
		if node := nodes[ts[0].NodeID]; node != nil {
			rv.Addr, _ = resolveTarget(addr, node)
		}
	}
	return rv
}

// gangEnv are the variables every worker gets; each torch name has a
// CARAVAN_ twin for programs that must not clash with torchrun's.
var gangEnv = []string{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
	"CARAVAN_RANK", "CARAVAN_WORLD_SIZE", "CARAVAN_MASTER_ADDR", "CARAVAN_MASTER_PORT"}

// tell sets what torchrun would give worker rank of world: each worker is
// one process that sees only its own GPU, so LOCAL_RANK is 0.
func (rv rendezvous) tell(task *api.Task, rank, world int) {
	if task.Env == nil {
		task.Env = map[string]string{}
	}
	r, w, port := strconv.Itoa(rank), strconv.Itoa(world), strconv.Itoa(rv.Port)
	for k, v := range map[string]string{
		"RANK": r, "WORLD_SIZE": w, "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1", "MASTER_ADDR": rv.Addr, "MASTER_PORT": port,
		"CARAVAN_RANK": r, "CARAVAN_WORLD_SIZE": w, "CARAVAN_MASTER_ADDR": rv.Addr, "CARAVAN_MASTER_PORT": port,
	} {
		task.Env[k] = v
	}
}

// forgetGangEnv drops a previous admission's rendezvous.
func forgetGangEnv(task *api.Task) {
	for _, k := range gangEnv {
		delete(task.Env, k)
	}
}
