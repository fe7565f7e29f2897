# Tune the digits MLP: `caravan tune run jobspecs/tune-digits.tune.hcl`
# (after registering jobspecs/tune-digits.nomad.hcl). Synchronous successive
# halving: 9 configurations for 40 steps, the best 3 for 120, the best one
# for 360; the metric is the held-out loss each trial writes.
tune "digits" {
  job       = "tune-digits"
  task      = "trial"
  metric    = "val_loss"
  mode      = "min"
  algorithm = "sha"
  trials    = 9
  seed      = 1
  # the batch param is the batch size: the fluid policy packs trials by
  # the digits model's measured profile at it
  batch_param = "batch"

  budget {
    unit      = "steps"
    min       = 40
    max       = 360
    reduction = 3
  }

  param "lr" {
    type = "log_uniform"
    min  = 0.003
    max  = 0.5
  }

  param "batch" {
    type   = "choice"
    values = [16, 32, 64, 128]
  }

  param "width" {
    type = "int"
    min  = 16
    max  = 256
  }
}
