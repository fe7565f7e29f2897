package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/nomad/plugins/drivers"
)

// Where an isolated task finds caravan's files inside its chroot.
const (
	taskCheckpointDir = "/caravan/checkpoint"
	taskMPSPipeDir    = "/caravan/mps"
	taskAllocDir      = "/alloc"
)

// finishedSuffix marks, beside a checkpoint dir and out of the task's
// reach, that the task completed: the next start of that run begins fresh.
const finishedSuffix = ".finished"

// retiredInfix names a completed run's checkpoint moved aside until the
// garbage collector removes it.
const retiredInfix = ".done-"

// taskPaths are the files caravan gives a task beyond Nomad's task dir,
// as paths on the host.
type taskPaths struct {
	// CheckpointDir belongs to one run of the job: it survives the
	// allocation so a preempted or restarted task resumes.
	CheckpointDir string
	// ProgressFile lives in the shared alloc dir so `nomad alloc fs` and
	// the scheduler (through Nomad's API) can read it.
	ProgressFile string
	// Note explains a degraded checkpoint (see jobRunKey), or "".
	Note string
}

// env is what the task is told; isolated tasks see their chroot's paths.
func (p taskPaths) env(isolated bool, taskName string) map[string]string {
	if isolated {
		return map[string]string{
			"CARAVAN_CHECKPOINT_DIR": taskCheckpointDir,
			"CARAVAN_PROGRESS_FILE":  filepath.Join(taskAllocDir, "caravan", taskName+".progress.jsonl"),
		}
	}
	return map[string]string{
		"CARAVAN_CHECKPOINT_DIR": p.CheckpointDir,
		"CARAVAN_PROGRESS_FILE":  p.ProgressFile,
	}
}

// checkpointDir is <root>/<namespace>/<job_id>/<run>/<group>/<task>.
func checkpointDir(root, run string, cfg *drivers.TaskConfig) (string, error) {
	ns := cfg.Namespace
	if ns == "" {
		ns = "default"
	}
	parts := []string{root, ns, jobDirName(cfg.JobID), run, cfg.TaskGroupName, cfg.Name}
	for _, p := range parts[1:] {
		if err := safePathPart(p); err != nil {
			return "", fmt.Errorf("checkpoint dir: %w", err)
		}
	}
	if strings.HasSuffix(cfg.Name, finishedSuffix) || strings.Contains(cfg.Name, retiredInfix) {
		return "", fmt.Errorf("checkpoint dir: task name %q collides with caravan's %q/%q markers", cfg.Name, finishedSuffix, retiredInfix)
	}
	return filepath.Join(parts...), nil
}

// jobDirName escapes a job ID for one path element: dispatched and
// periodic children are named "<parent>/dispatch-…" and "<parent>/periodic-…".
// Percent-encoding '%' and '/' keeps distinct IDs distinct.
func jobDirName(id string) string {
	return strings.NewReplacer("%", "%25", "/", "%2F").Replace(id)
}

// prepareTaskPaths creates the task's checkpoint dir for run and the empty
// progress file <alloc_dir>/alloc/caravan/<task_name>.progress.jsonl: in the
// allocation's shared dir (NOMAD_ALLOC_DIR), where Nomad keeps data meant to
// be read across tasks and through `nomad alloc fs`. Both belong to u.
func prepareTaskPaths(checkpointRoot, run string, cfg *drivers.TaskConfig, u *taskUser) (taskPaths, error) {
	dir, err := checkpointDir(checkpointRoot, run, cfg)
	if err != nil {
		return taskPaths{}, err
	}
	if err := prepareCheckpoint(dir, u); err != nil {
		return taskPaths{}, fmt.Errorf("checkpoint dir: %w", err)
	}
	if cfg.AllocDir == "" {
		return taskPaths{}, fmt.Errorf("progress file: the task has no alloc dir")
	}
	p := taskPaths{
		CheckpointDir: dir,
		ProgressFile:  filepath.Join(cfg.AllocDir, "alloc", "caravan", cfg.Name+".progress.jsonl"),
	}
	if err := os.MkdirAll(filepath.Dir(p.ProgressFile), 0o755); err != nil {
		return taskPaths{}, fmt.Errorf("progress file: %w", err)
	}
	f, err := os.OpenFile(p.ProgressFile, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return taskPaths{}, fmt.Errorf("progress file: %w", err)
	}
	if err := f.Close(); err != nil {
		return taskPaths{}, fmt.Errorf("progress file: %w", err)
	}
	if err := chownTo(u, p.ProgressFile); err != nil {
		return taskPaths{}, fmt.Errorf("progress file: %w", err)
	}
	return p, nil
}

// prepareCheckpoint makes dir private to u (mode 0700). If the run's task
// completed there before, that checkpoint is moved aside first: a re-run
// of a finished job starts fresh. Parents are 0711, so no other user can
// list which jobs have checkpoints.
func prepareCheckpoint(dir string, u *taskUser) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o711); err != nil {
		return err
	}
	if _, err := os.Lstat(dir + finishedSuffix); err == nil {
		retired := fmt.Sprintf("%s%s%d", dir, retiredInfix, time.Now().UnixNano())
		if err := os.Rename(dir, retired); err != nil && !os.IsNotExist(err) {
			return err
		}
		if err := os.Remove(dir + finishedSuffix); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil { // older releases made 0755
		return err
	}
	now := time.Now()
	if err := os.Chtimes(dir, now, now); err != nil { // in use: not garbage
		return err
	}
	return chownTo(u, dir)
}

// markFinished records that the task completed in dir.
func markFinished(dir string) error {
	return os.WriteFile(dir+finishedSuffix, nil, 0o600)
}

// safePathPart rejects names that would escape the checkpoint root.
func safePathPart(p string) error {
	if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\\\x00") {
		return fmt.Errorf("%q cannot be used as a directory name", p)
	}
	return nil
}
