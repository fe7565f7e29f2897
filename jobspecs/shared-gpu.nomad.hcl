# Two tasks share one GPU, half each. The caravan driver's ledger places both
# on the same GPU (best fit) and confines each to its share with CUDA MPS.
#   nomad job run jobspecs/shared-gpu.nomad.hcl
variable "hold_seconds" {
  type        = number
  default     = 30
  description = "How long each task keeps its share before exiting."
}

job "shared-gpu" {
  type = "batch"

  group "pair" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "left" {
      driver = "caravan"
      config {
        command      = "/bin/sh"
        args         = ["-c", "env | grep -E '^(CUDA|CARAVAN)_' | sort; sleep ${var.hold_seconds}"]
        gpu_fraction = 0.5
        gpu_memory   = "8GiB"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }

    task "right" {
      driver = "caravan"
      config {
        command      = "/bin/sh"
        args         = ["-c", "env | grep -E '^(CUDA|CARAVAN)_' | sort; sleep ${var.hold_seconds}"]
        gpu_fraction = 0.5
        gpu_memory   = "8GiB"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
