"""Checks for the lessons' exercises: each looks at what the learner wrote and answers with a precise hint.

A check never raises: it returns a :class:`Verdict` (done or "not yet", and what to do next), which shows itself in
Jupyter. So a notebook run top to bottom with the exercises unsolved still finishes (nbval, papermill), and every
"not yet" says which line, tensor or rank is still wrong. One module per lesson (``helpers/exercises/lesson01.py``
for lesson 01's); checks of device-agnostic code also run it on simulated machines (``simulated.py``).

    >>> from helpers.exercises import check_build_kind
    >>> check_build_kind(lambda torch: "cuda")
    not yet (01b): a ROCm build (torch.version.hip='7.14.60001', torch.version.cuda=None) got 'cuda', expected ...
"""

from helpers.exercises.core import Verdict
from helpers.exercises.lesson01 import check_build_kind, check_portable_predict
from helpers.exercises.lesson02 import check_amp_step, check_speedup
from helpers.exercises.lesson03 import check_checkpoint_loader, check_portable_save
from helpers.exercises.lesson04 import check_device_follows_input, check_diagnoses
from helpers.exercises.lesson05 import check_lane_masks, check_reduction_offsets
from helpers.exercises.lesson06 import check_backend_choice, check_hang_fixed
from helpers.exercises.lesson07 import check_gpu_timer, check_tunableop_env
from helpers.exercises.lesson08 import check_flash_port, check_optional_flash

__all__ = [
    "Verdict",
    "check_amp_step",
    "check_backend_choice",
    "check_build_kind",
    "check_checkpoint_loader",
    "check_device_follows_input",
    "check_diagnoses",
    "check_flash_port",
    "check_gpu_timer",
    "check_hang_fixed",
    "check_lane_masks",
    "check_optional_flash",
    "check_portable_predict",
    "check_portable_save",
    "check_reduction_offsets",
    "check_speedup",
    "check_tunableop_env",
]
