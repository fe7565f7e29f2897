package tune

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDigitsTrainerResumes runs the shipped trial (real PyTorch on CPU)
// as the tuner drives it with spec.checkpoint: rung 0 saves the trial's
// checkpoint, the promoted rung resumes it (its progress starts past the
// handed-over steps and its metric is found at the rung's budget), and a
// checkpoint that is not what the tuner says (other steps, other
// configuration) is refused: that run trains from scratch.
func TestDigitsTrainerResumes(t *testing.T) {
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch, sklearn").Run() != nil {
		t.Skip("needs /usr/bin/python3 with torch and scikit-learn (python3-torch, python3-sklearn)")
	}
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "shared", "digits-1", "trial-3.pt")
	run := func(steps, resume, lr string) (string, []byte) {
		t.Helper()
		prog := filepath.Join(dir, "progress-"+steps+"-"+resume+"-"+lr)
		cmd := exec.Command(py, "../workloads/train_digits.py", "--steps", steps, "--batch", "32", "--width", "32",
			"--lr", lr, "--holdout", "0.2", "--trial-checkpoint", ckpt, "--resume-steps", resume)
		cmd.Env = append(os.Environ(), "CARAVAN_PROGRESS_FILE="+prog, "CARAVAN_CHECKPOINT_DIR=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("trainer: %v\n%s", err, out)
		}
		data, err := os.ReadFile(prog)
		if err != nil {
			t.Fatal(err)
		}
		return string(out), data
	}
	if out, _ := run("20", "0", "0.1"); !strings.Contains(out, "trial checkpoint saved at step 20") {
		t.Fatalf("rung 0 saved no trial checkpoint:\n%s", out)
	}
	out, prog := run("60", "20", "0.1")
	if !strings.Contains(out, "resumed trial checkpoint") || !strings.HasPrefix(string(prog), `{"step": 30,`) {
		t.Fatalf("promoted rung did not resume:\n%s\n%s", out, prog)
	}
	if v, _, err := MetricAt(prog, "val_loss", 60); err != nil || !(v > 0) {
		t.Fatalf("val_loss at 60: %v %v", v, err)
	}
	if out, _ := run("180", "20", "0.1"); !strings.Contains(out, "holds step 60; training from scratch") {
		t.Fatalf("a checkpoint at the wrong step was resumed:\n%s", out)
	}
	if out, _ := run("40", "180", "0.2"); !strings.Contains(out, "differs; training from scratch") {
		t.Fatalf("another configuration's checkpoint was resumed:\n%s", out)
	}
}
