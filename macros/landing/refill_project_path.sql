{% macro refill_project_path(path, relative_to='project') %}
    {#--
        `path` as the engine must be given it: absolute, normalized (`.` and `..` resolved
        as dbt resolves them, by their names). The one home of that on the dbt side.

        A path dbt holds relative (its project dir when --project-dir is relative,
        `relative_to='dbt'`) names a file in dbt's working directory; a relative
        REFILL_LANDING names one in the project folder (`relative_to='project'`, as
        refill.settings resolves it). The engine does not open either there: Spark runs its
        script transformation in a folder of its own, and a cluster runs in its own
        process. So a relative path is joined here to the project folder, once; that folder
        is absolute when dbt's project dir is, else joined to dbt's working directory,
        which a macro cannot ask the system for: $PWD, as the shell that started dbt set it
        (the reference rule checks each seed's bytes against what dbt parsed, so a $PWD
        that names another folder is refused, not read). A URI (`file:`, `s3a://`) is kept.
    --#}
    {%- set text = path | string -%}
    {%- if not execute -%}{{ return(text) }}{%- endif -%}
    {%- if modules.re.search('[\\x00-\\x1f\\x7f]', text) -%}
        {{ exceptions.raise_compiler_error(
            "refill input: the path " ~ tojson(text) ~ " holds a control character; use a plain path") }}
    {%- endif -%}
    {%- if modules.re.match('[A-Za-z][A-Za-z0-9+.-]*:', text) -%}
        {{ return(text) }}
    {%- endif -%}
    {%- if not text.startswith('/') -%}
        {%- if relative_to == 'project' -%}
            {%- set text = refill_project_root() ~ '/' ~ text -%}
        {%- else -%}
            {%- set working = env_var('PWD', '') -%}
            {%- if not working.startswith('/') -%}
                {{ exceptions.raise_compiler_error(
                    "refill input: " ~ tojson(text) ~ " is relative to dbt's working directory, which is not known"
                    ~ " ($PWD is not an absolute path); give dbt an absolute --project-dir") }}
            {%- endif -%}
            {%- set text = working ~ '/' ~ text -%}
        {%- endif -%}
    {%- endif -%}
    {%- set parts = [] -%}
    {%- for part in text.split('/') if part not in ('', '.') -%}
        {%- if part == '..' -%}
            {%- if parts -%}{%- do parts.pop() -%}{%- endif -%}
        {%- else -%}
            {%- do parts.append(part) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return('/' ~ parts | join('/')) }}
{% endmacro %}

{% macro refill_project_root() %}
    {#-- The dbt project folder, absolute (refill_project_path): this invocation's project dir
         as dbt was given it (dbt fills in an absolute one when none is given). Not a node's
         root_path: partial parsing keeps the one of the invocation that parsed the node,
         which may have spelled the folder otherwise (relative from elsewhere). --#}
    {%- set given = invocation_args_dict.get('project_dir') -%}
    {%- if not given -%}
        {{ exceptions.raise_compiler_error(
            "refill project: this dbt invocation names no project dir; give dbt an absolute --project-dir") }}
    {%- endif -%}
    {{ return(refill_project_path(given, relative_to='dbt')) }}
{% endmacro %}
