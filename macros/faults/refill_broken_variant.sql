{% macro refill_broken_variant() %}
    {#--
        The deliberately broken variant the fault-injection harness is running, or none.
        Set only by the harness (harness/variants.py, through DbtProject.extra_vars; no
        command line or environment variable reaches it). A broken variant models a
        pipeline without refill's safety net, so it also switches the in-transaction
        audits off: the harness's invariant checker, not the audits, must catch it.
        Variants: append (insert without the window's delete), clock_date (rows dated by
        the run's clock, not the partition), split_transaction (the delete committed
        before the insert).
    --#}
    {{ return(var('refill_broken_variant', none)) }}
{% endmacro %}
