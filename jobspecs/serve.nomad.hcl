# Caravan serve front end (`caravan serve run`): HTTP/JSON inference with
# per-request deadlines, Orloj batching, workers found in Consul
# (jobspecs/serve-workers.nomad.hcl). Registered in Consul as "caravan-serve".
#
#   nomad job run -var caravan=$PWD/bin/caravan -var api_token=$TOKEN \
#     -var worker_token=$WTOKEN jobspecs/serve.nomad.hcl
#   curl -H "Authorization: Bearer $TOKEN" -d '{"tokens":[1,2,3],"max_tokens":8}' \
#     http://<addr>/v1/models/lstm-gen/infer
variable "caravan" {
  type        = string
  default     = "/usr/local/bin/caravan"
  description = "Path of the caravan CLI on the clients."
}

variable "policy" {
  type    = string
  default = "orloj" # or clockwork, fifo
}

variable "models" {
  type        = list(string)
  default     = ["name=lstm-gen,slo=400ms,features=true,max_batch=16"]
  description = "One -model flag each: name, slo, features, max_batch, max_input, max_output."
}

variable "consul_addr" {
  type    = string
  default = "127.0.0.1:8500"
}

variable "api_token" {
  type        = string
  description = "Bearer token clients send (keep it in a Nomad Variable in production)."
}

variable "worker_token" {
  type = string
}

job "caravan-serve" {
  type = "service"

  group "frontend" {
    network {
      port "http" {}
    }

    service {
      name     = "caravan-serve"
      port     = "http"
      provider = "consul"

      check {
        type     = "http"
        path     = "/healthz"
        interval = "2s"
        timeout  = "1s"
      }
    }

    task "serve" {
      # Like the scheduler, a Caravan service on the host (raw_exec): it
      # needs no GPU, and the caravan driver's chroot would hide the binary.
      driver = "raw_exec"

      config {
        command = var.caravan
        args = concat(["serve", "run", "-addr", "${NOMAD_ADDR_http}", "-policy", var.policy,
        "-consul", var.consul_addr], flatten([for m in var.models : ["-model", m]]))
      }

      env {
        CARAVAN_SERVE_TOKEN        = var.api_token
        CARAVAN_SERVE_WORKER_TOKEN = var.worker_token
      }

      kill_timeout = "10s"

      resources {
        cpu    = 500
        memory = 256
      }
    }
  }
}
