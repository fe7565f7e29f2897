package driver

import (
	"path/filepath"
	"testing"

	"github.com/caravan-dl/caravan/driver/gpu"
	"github.com/caravan-dl/caravan/driver/ledger"
	"github.com/hashicorp/nomad/plugins/drivers"
	pstructs "github.com/hashicorp/nomad/plugins/shared/structs"
)

// seedGrant leaves a grant in the state dir's ledger, as a task that died
// with the node would.
func seedGrant(t *testing.T, stateDir, taskID string, fraction float64) ledger.Grant {
	t.Helper()
	inv := gpu.NewSimulated(simConfig(stateDir, 1).SimulatedGPUs.simConfig())
	devs, _ := inv.Devices()
	l, err := ledger.Open(filepath.Join(stateDir, "ledger.json"), devs)
	if err != nil {
		t.Fatal(err)
	}
	g, err := l.Admit(taskID, ledger.Request{Fraction: fraction})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestSweepOrphans_FreesUnclaimedGrants(t *testing.T) {
	state := t.TempDir()
	seedGrant(t, state, "ghost", 0.5)
	td := newTestDriver(t, simConfig(state, 1))
	if f := freeFraction(t, td, 0); f != 0.5 {
		t.Fatalf("persisted grant not loaded, free = %v", f)
	}
	live := td.newTask(t, "live", "sleep 30", TaskConfig{GPUFraction: "0.25"})
	if _, _, err := td.StartTask(live); err != nil {
		t.Fatal(err)
	}
	defer td.DestroyTask(live.ID, true)

	td.impl.sweepOrphans(td.impl.node)
	if f := freeFraction(t, td, 0); f != 0.75 {
		t.Fatalf("sweep must free only the ghost grant, free = %v", f)
	}
}

func TestRecoverTask_LostExecutorFreesGrant(t *testing.T) {
	state := t.TempDir()
	g := seedGrant(t, state, "dead-task", 0.5)
	td := newTestDriver(t, simConfig(state, 1))
	task := td.newRejectedTask(t, "dead", TaskConfig{})
	task.ID = "dead-task"
	handle := drivers.NewTaskHandle(taskHandleVersion)
	handle.Config = task
	err := handle.SetDriverState(&taskState{
		TaskConfig:     task,
		ReattachConfig: &pstructs.ReattachConfig{Network: "unix", Addr: filepath.Join(state, "no-such-socket"), Pid: 1 << 22},
		Grants:         []ledger.Grant{g},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := td.RecoverTask(handle); err == nil {
		t.Fatal("recovering a task whose executor is gone must fail")
	}
	if f := freeFraction(t, td, 0); f != 1 {
		t.Errorf("the lost task's grant must be freed, free = %v", f)
	}
}
