"""The retry sensor evaluated once in this process, as the daemon would evaluate it."""

from typing import Any


def retry_requests(home_res: Any, gates_res: Any, cursor: str | None) -> tuple[list[Any], str | None]:
    """Evaluate the real retry sensor once, as the daemon would, and return its run requests and cursor."""
    import dagster as dg

    from kavi_assets.cli.dagster_env import instance, quiet_dagster_logs
    from sensors.retry import retry_failed_attempts

    ctx = dg.build_sensor_context(instance=instance(), cursor=cursor,
                                  resources={"home": home_res, "gates": gates_res})
    with quiet_dagster_logs():  # the sensor's log lines are the daemon's; the demo prints its own
        result = retry_failed_attempts(ctx)
    requests = list(result.run_requests or []) if isinstance(result, dg.SensorResult) else []
    return requests, ctx.cursor
