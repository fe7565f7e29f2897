# A job that spills preprocessed batches to remote memory and reads them
# back (memshare). The driver leases `remote_memory` from donors, striped with
# Reed-Solomon parity, and hands the task CARAVAN_REMOTE_MEMORY_URI.
#   nomad job run -var workloads=$PWD/workloads jobspecs/memshare-consumer.nomad.hcl
variable "workloads" {
  type    = string
  default = "/opt/caravan/workloads"
}

variable "python" {
  type        = string
  default     = "/usr/bin/python3"
  description = "A Python with Debian's python3-libnbd, numpy and scikit-learn."
}

variable "remote_memory" {
  type    = string
  default = "64MiB"
}

variable "batches" {
  type    = number
  default = 64
}

variable "hold_seconds" {
  type        = number
  default     = 0
  description = "Seconds the batches live only in remote memory before the read-back."
}

job "memshare-consumer" {
  type = "batch"

  group "spill" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "spill" {
      driver = "caravan"

      config {
        command       = var.python
        args          = ["${var.workloads}/memshare_spill.py", "--batches", "${var.batches}", "--hold-seconds", "${var.hold_seconds}"]
        remote_memory = var.remote_memory
      }

      resources {
        cpu    = 200
        memory = 256
      }
    }
  }
}
