# One trial of a hyperparameter search over the PyTorch digits workload: a
# parameterized batch job that `caravan tune run jobspecs/tune-digits.tune.hcl`
# dispatches once per trial and rung. The hyperparameters arrive as dispatch
# meta (lr, batch, width), the rung's budget as meta "steps"; the trial
# appends val_loss to $CARAVAN_PROGRESS_FILE, which the tuner reads through
# Nomad's fs API. Register it first:
#   nomad job run -var workloads=$PWD/workloads jobspecs/tune-digits.nomad.hcl
# In node_pool caravan-queue (the default) the caravan scheduler admits each
# trial; run it with `-policy fluid` to water-fill the trials over GPUs.
variable "workloads" {
  type        = string
  default     = "/opt/caravan/workloads"
  description = "Folder holding train_digits.py."
}

variable "python" {
  type        = string
  default     = "/usr/bin/python3"
  description = "A Python with torch and scikit-learn (Debian's python3-torch)."
}

variable "node_pool" {
  type        = string
  default     = "caravan-queue"
  description = "caravan-queue goes through the caravan scheduler; default runs trials directly."
}

variable "gpu_fraction" {
  type        = number
  default     = 0.25
  description = "GPU share a trial asks for (1 = a whole GPU each, the one-trial-per-GPU baseline); the fluid policy re-plans it."
}

variable "step_sleep" {
  type        = number
  default     = 0
  description = "Seconds per step to stretch a demo run."
}

job "tune-digits" {
  type      = "batch"
  node_pool = var.node_pool

  # checkpoint and resume_steps come from the tuner when the tuning spec
  # sets checkpoint (a directory every trial can write): a promoted trial
  # then resumes its previous rung instead of retraining it. caravan.model
  # names the measured profile (scheduler/policy/fluid/profiles) the fluid
  # policy packs by, with the batch the tuner sends as caravan.batch_size
  # when the spec sets batch_param = "batch".
  meta = {
    "caravan.pool"  = "default"
    "caravan.model" = "digits-mlp"
    "checkpoint"    = ""
    "resume_steps"  = "0"
  }

  parameterized {
    meta_required = ["lr", "batch", "width", "steps"]
    meta_optional = ["trial", "checkpoint", "resume_steps", "caravan.batch_size"]
  }

  group "trial" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "trial" {
      driver       = "caravan"
      kill_signal  = "SIGTERM"
      kill_timeout = "10s"

      config {
        command = var.python
        args = ["${var.workloads}/train_digits.py",
          "--lr", "${NOMAD_META_lr}", "--batch", "${NOMAD_META_batch}", "--width", "${NOMAD_META_width}",
          "--steps", "${NOMAD_META_steps}", "--holdout", "0.2", "--step-sleep", "${var.step_sleep}",
          "--trial-checkpoint", "${NOMAD_META_checkpoint}", "--resume-steps", "${NOMAD_META_resume_steps}"]
        gpu_fraction = var.gpu_fraction
        gpu_memory   = "1GiB"
      }

      resources {
        cpu    = 100
        memory = 256
      }
    }
  }
}
