"""Renderers: one per format (text, json, junit, github) over the same findings; errors rendered here."""

from enum import Enum


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    junit = "junit"
    github = "github"
