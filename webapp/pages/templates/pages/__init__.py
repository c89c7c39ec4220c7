"""The pages' templates, under the blueprint's name as Flask looks them up."""
