# Two-worker PyTorch DDP training (CPU) whose gradients are averaged by the
# shared aggregation service. The caravan driver resolves
# `aggregator = "caravan-aggsvc"` in Consul and gives each task
# CARAVAN_AGGREGATOR_ADDRS, _JOB and _TOKEN; the DDP comm hook in
# aggsvc/python/caravan_aggsvc.py sends every gradient bucket there. gloo only
# sets up the process group: worker 0 hosts the rendezvous at var.init, so
# point it at an address and free port of the node worker 0 runs on (the
# default suits a one-node demo).
# With mode = "compare" each worker also trains a plain gloo all-reduce twin
# in lockstep and reports how far the parameters drift apart.
#   nomad job run -var workloads=$PWD/workloads jobspecs/train-ddp-aggsvc.nomad.hcl
variable "workloads" {
  type        = string
  default     = "/opt/caravan/workloads"
  description = "Folder holding train_ddp_aggsvc.py and caravan_aggsvc.py."
}

variable "python" {
  type    = string
  default = "/usr/bin/python3"
}

variable "init" {
  type        = string
  default     = "tcp://127.0.0.1:29511"
  description = "torch.distributed init_method (worker 0 listens there)."
}

variable "steps" {
  type    = number
  default = 60
}

variable "hidden" {
  type    = number
  default = 64
}

variable "mode" {
  type    = string
  default = "compare"
}

job "train-ddp-aggsvc" {
  type = "batch"

  group "worker" {
    count = 2

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

      config {
        command = var.python
        args = ["${var.workloads}/train_ddp_aggsvc.py", "--mode", var.mode, "--world", "2", "--init", var.init,
        "--steps", "${var.steps}", "--hidden", "${var.hidden}"]
        aggregator = "caravan-aggsvc"
      }

      resources {
        cpu    = 500
        memory = 1024
      }
    }
  }
}
