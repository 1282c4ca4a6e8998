import os

from hypothesis import HealthCheck, settings

# CI pins hypothesis: the same examples every run, so a red run can be reproduced.
settings.register_profile(
    "ci", derandomize=True, max_examples=60, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A longer hunt, run by hand (HYPOTHESIS_PROFILE=thorough) before claiming a property.
settings.register_profile("thorough", max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
