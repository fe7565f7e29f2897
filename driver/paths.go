package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/nomad/plugins/drivers"
)

// taskPaths are the files caravan gives a task beyond Nomad's task dir.
type taskPaths struct {
	// CheckpointDir survives the allocation so a preempted job resumes.
	CheckpointDir string
	// ProgressFile lives in the shared alloc dir so `nomad alloc fs` and
	// the scheduler (through Nomad's API) can read it.
	ProgressFile string
}

func (p taskPaths) env() map[string]string {
	return map[string]string{
		"CARAVAN_CHECKPOINT_DIR": p.CheckpointDir,
		"CARAVAN_PROGRESS_FILE":  p.ProgressFile,
	}
}

// prepareTaskPaths creates the checkpoint dir
// <root>/<namespace>/<job_id>/<task_group>/<task_name> and the empty
// progress file <alloc_dir>/alloc/caravan/<task_name>.progress.jsonl: in the
// allocation's shared dir (NOMAD_ALLOC_DIR), where Nomad keeps data meant to
// be read across tasks and through `nomad alloc fs`.
func prepareTaskPaths(checkpointRoot string, cfg *drivers.TaskConfig) (taskPaths, error) {
	ns := cfg.Namespace
	if ns == "" {
		ns = "default"
	}
	parts := []string{ns, cfg.JobID, cfg.TaskGroupName, cfg.Name}
	for i, p := range parts {
		if err := safePathPart(p); err != nil {
			return taskPaths{}, fmt.Errorf("checkpoint dir: %w", err)
		}
		parts[i] = p
	}
	p := taskPaths{
		CheckpointDir: filepath.Join(append([]string{checkpointRoot}, parts...)...),
		ProgressFile:  filepath.Join(cfg.AllocDir, "alloc", "caravan", cfg.Name+".progress.jsonl"),
	}
	if err := os.MkdirAll(p.CheckpointDir, 0o755); err != nil {
		return taskPaths{}, fmt.Errorf("checkpoint dir: %w", err)
	}
	if cfg.AllocDir == "" {
		return taskPaths{}, fmt.Errorf("progress file: the task has no alloc dir")
	}
	if err := os.MkdirAll(filepath.Dir(p.ProgressFile), 0o777); err != nil {
		return taskPaths{}, fmt.Errorf("progress file: %w", err)
	}
	f, err := os.OpenFile(p.ProgressFile, os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		return taskPaths{}, fmt.Errorf("progress file: %w", err)
	}
	if err := f.Close(); err != nil {
		return taskPaths{}, fmt.Errorf("progress file: %w", err)
	}
	if err := chownForUser(cfg.User, p.CheckpointDir, p.ProgressFile); err != nil {
		return taskPaths{}, err
	}
	return p, nil
}

// safePathPart rejects names that would escape the checkpoint root.
func safePathPart(p string) error {
	if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\\\x00") {
		return fmt.Errorf("%q cannot be used as a directory name", p)
	}
	return nil
}
