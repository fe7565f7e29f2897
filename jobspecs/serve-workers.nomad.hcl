# Caravan serve model workers: Python/PyTorch processes (workloads/serve/worker.py)
# on a share of a GPU through the caravan driver, registered in Consul as
# service "caravan-serve-worker" tagged with the model, where the front end
# (jobspecs/serve.nomad.hcl) finds them. Scale with `nomad job scale`; the
# front end follows within one Consul blocking query.
#
#   nomad job run -var workloads=$PWD/workloads -var worker_token=$WTOKEN \
#     jobspecs/serve-workers.nomad.hcl
variable "workloads" {
  type        = string
  default     = "/opt/caravan/workloads"
  description = "Folder holding serve/worker.py and serve/models.py on the clients (in the caravan driver's chroot_env)."
}

variable "model" {
  type    = string
  default = "lstm-gen" # or earlyexit-cnn, static-cnn
}

variable "count" {
  type    = number
  default = 2
}

variable "gpu_fraction" {
  type    = number
  default = 0.25
}

variable "worker_token" {
  type        = string
  description = "Bearer token the front end sends to workers (keep it in a Nomad Variable in production)."
}

job "caravan-serve-workers" {
  type = "service"

  group "worker" {
    count = var.count

    network {
      port "http" {}
    }

    service {
      name     = "caravan-serve-worker"
      tags     = [var.model]
      port     = "http"
      provider = "consul"

      check {
        type     = "http"
        path     = "/healthz"
        interval = "2s"
        timeout  = "1s"
      }
    }

    task "worker" {
      driver = "caravan"

      config {
        command      = "/usr/bin/python3"
        args         = ["${var.workloads}/serve/worker.py", "--model", var.model]
        gpu_fraction = var.gpu_fraction
      }

      env {
        CARAVAN_SERVE_WORKER_TOKEN = var.worker_token
        CARAVAN_SERVE_THREADS      = "1"
      }

      kill_timeout = "5s"

      resources {
        cpu    = 500
        memory = 600
      }
    }
  }
}
