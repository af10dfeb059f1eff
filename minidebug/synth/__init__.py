"""Tasks made from a repository's own code: procedural bugs (libcst modifiers, behind the `synth` extra), the
coverage map of which tests reach which function, the validation of each candidate by the tests that reach it and
then the whole suite, the problem statement written from the failing tests, and the writing of `[source]` task
folders. It uses tasks, store, sandbox, core (one episode's eval says which tests count) and the drivers' pytest
plugin; nothing below it imports it.
"""
