# A real PyTorch training job on CPU (scikit-learn's bundled digits data) with
# a quarter of a GPU. It appends its loss to $CARAVAN_PROGRESS_FILE, checkpoints
# to $CARAVAN_CHECKPOINT_DIR on SIGTERM, and resumes from the checkpoint.
#   nomad job run -var workloads=$PWD/workloads jobspecs/train-digits.nomad.hcl
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

variable "steps" {
  type    = number
  default = 400
}

variable "step_sleep" {
  type    = number
  default = 0
}

job "train-digits" {
  type = "batch"

  group "train" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "train" {
      driver = "caravan"

      # Time to write a checkpoint after SIGTERM before being killed.
      kill_signal  = "SIGTERM"
      kill_timeout = "30s"

      config {
        command      = var.python
        args         = ["${var.workloads}/train_digits.py", "--steps", "${var.steps}", "--step-sleep", "${var.step_sleep}"]
        gpu_fraction = 0.25
        gpu_memory   = "4GiB"
      }

      resources {
        cpu    = 500
        memory = 1024
      }
    }
  }
}
